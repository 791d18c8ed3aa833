"""Webhook URLs are user input: every attempt goes through the guarded client, and a
destination it refuses is recorded on the delivery as url_refused and not retried."""
import pytest

from persistence.webhooks import WebhookDelivery
from socialpub.outbound import Allowlist, GuardedClient
from socialpub.webhooks import deliveries as webhook_deliveries, endpoints as webhook_endpoints, fanout
from tests.support.webhook_receiver import Answer
from tests.support.factories import OPERATOR


def attempt(db, session, endpoint, settings, client=None) -> WebhookDelivery:
    delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
    webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=settings, client=client)
    session.expire_all()
    return session.get(WebhookDelivery, delivery.id)


def assert_refused(delivery: WebhookDelivery, mentions: str) -> None:
    assert delivery.status == "failed" and delivery.attempts == 1
    assert delivery.last_error_code == "url_refused"
    assert mentions in delivery.last_error_message
    assert delivery.response_status is None and delivery.next_attempt_at is None


class TestRefusedDestinations:
    @pytest.mark.parametrize(
        "url, mentions",
        [
            ("http://127.0.0.1:9/hooks", "127.0.0.1"),
            ("http://10.0.0.1/hooks", "10.0.0.1"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            ("http://[::1]:9/hooks", "::1"),
            ("http://[::ffff:10.0.0.1]/hooks", "non-public"),
            ("http://192.168.0.10/hooks", "192.168.0.10"),
            ("http://[2002:a9fe:a9fe::]/latest/meta-data/", "non-public"),  # 6to4 around 169.254.169.254
        ],
    )
    def test_non_public_addresses_are_refused_and_recorded(self, db, session, add_endpoint, wh_settings, monkeypatch, url, mentions):
        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", raising=False)
        endpoint, _ = add_endpoint(url)
        assert_refused(attempt(db, session, endpoint, wh_settings), mentions)

    @pytest.mark.parametrize("url", ["http://a..b.com/hooks", "https://" + "a" * 64 + ".example/hooks"])
    def test_a_stored_url_with_an_unusable_host_is_refused_and_recorded(self, db, session, add_endpoint, wh_settings, url):
        # Stored before such hosts were refused when an endpoint is added.
        endpoint, _ = add_endpoint("https://hooks.example/in")
        endpoint.url = url
        session.commit()
        delivery = attempt(db, session, endpoint, wh_settings)
        assert_refused(delivery, "not a usable host name")
        assert delivery.lease_until is None and delivery.give_up_at is not None

    def test_an_event_delivery_to_a_refused_url_is_not_retried(self, db, session, workspace, add_endpoint, wh_settings, monkeypatch):
        from sqlalchemy import select

        from socialpub.events import service as events

        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", raising=False)
        endpoint, _ = add_endpoint("http://169.254.169.254/latest/meta-data/")
        events.record(session, workspace_id=workspace.id, livemode=False, type="post.published", data={})
        session.commit()
        fanout.fan_out_events(database=db, settings=wh_settings)
        delivery = session.execute(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)).scalar_one()
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        session.expire_all()
        assert_refused(session.get(WebhookDelivery, delivery.id), "169.254.169.254")

    def test_a_redirect_from_an_allowed_receiver_to_a_private_address_is_refused(self, db, session, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(307, location="http://10.0.0.1/internal"))
        delivery = attempt(db, session, endpoint, wh_settings)
        assert len(receiver.received) == 1  # the allowed hop was made; the private one never
        assert_refused(delivery, "10.0.0.1")

    def test_a_redirect_to_metadata_by_post_keeping_303_is_refused(self, db, session, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(303, location="http://169.254.169.254/latest/meta-data/"))
        assert_refused(attempt(db, session, endpoint, wh_settings), "169.254.169.254")

    def test_localhost_is_refused_after_resolution(self, db, session, add_endpoint, receiver, wh_settings):
        # 127.0.0.1 is allowed by address for the receiver; the name is not, and resolves to loopback.
        endpoint, _ = add_endpoint(receiver.url.replace("127.0.0.1", "localhost"))
        client = GuardedClient(allowlist=Allowlist.parse("only-this.example"))
        delivery = attempt(db, session, endpoint, wh_settings, client=client)
        assert_refused(delivery, "non-public")
        assert receiver.received == []

    def test_a_hostname_whose_dns_answers_loopback_is_refused(self, db, session, add_endpoint, wh_settings, monkeypatch):
        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", raising=False)
        endpoint, _ = add_endpoint("https://hooks.innocent.example/receive")
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["127.0.0.1"])
        assert_refused(attempt(db, session, endpoint, wh_settings, client=client), "127.0.0.1")

    def test_the_default_client_resolves_names_too(self, db, session, add_endpoint, wh_settings, monkeypatch):
        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", raising=False)
        resolved = []

        def resolver(self, host, port):
            resolved.append(host)
            return ["10.1.2.3"]

        monkeypatch.setattr(GuardedClient, "_resolve", resolver)
        endpoint, _ = add_endpoint("https://internal.example/hooks")
        assert_refused(attempt(db, session, endpoint, wh_settings), "10.1.2.3")
        assert resolved == ["internal.example"]

    @pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://x/", "ftp://example.com/", "http://", "not a url", "", "https://exa mple.com/"])
    def test_other_schemes_and_malformed_urls_are_refused_at_creation(self, session, workspace, url):
        from socialpub.errors import ApiError

        with pytest.raises(ApiError) as refused:
            webhook_endpoints.create_endpoint(session=session, actor=OPERATOR, workspace_id=workspace.id, livemode=False, url=url, description=None, event_types=None)
        assert refused.value.status == 422 and refused.value.details[0]["field"] == "url"
