"""Managing endpoints and reading deliveries through the service functions: input is
validated, and one workspace never reaches another's endpoints or deliveries."""
import pytest
from sqlalchemy import select

from persistence.webhooks import WebhookDelivery, WebhookEndpoint
from socialpub.errors import ApiError
from socialpub.events import service as events
from socialpub.webhooks import endpoints as webhook_endpoints, fanout
from tests.support.factories import make_workspace
from tests.support.factories import OPERATOR


def create(session, workspace_id, **overrides):
    values = dict(livemode=False, url="https://hooks.example/receive", description=None, event_types=None)
    values.update(overrides)
    return webhook_endpoints.create_endpoint(session=session, actor=OPERATOR, workspace_id=workspace_id, **values)


class TestCreate:
    def test_stores_what_was_asked(self, session, workspace):
        endpoint, secret = create(session, workspace.id, livemode=True, description=" Orders ",
                                  event_types=["post.published", "post.failed", "post.published"])
        assert endpoint.livemode and endpoint.enabled and endpoint.description == "Orders"
        assert endpoint.event_types == ["post.published", "post.failed"]
        assert fanout.subscribes(endpoint, "post.failed") and not fanout.subscribes(endpoint, "bulk.completed")
        everything, _ = create(session, workspace.id)
        assert everything.event_types is None and fanout.subscribes(everything, "incident.resolved")

    @pytest.mark.parametrize(
        "overrides, field",
        [
            (dict(event_types=["post.deleted"]), "eventTypes"),
            (dict(event_types=[]), "eventTypes"),
            (dict(event_types=["test.ping"]), "eventTypes"),
            (dict(url="ftp://hooks.example/"), "url"),
            (dict(url="https://hooks.example/" + "a" * 2100), "url"),
            (dict(livemode=True, url="http://hooks.example/receive"), "url"),
            (dict(description="x" * 501), "description"),
            (dict(url="http://a..b.com/"), "url"),
            (dict(url="https://" + "a" * 64 + ".example/in"), "url"),
            (dict(url="https://.hooks.example/in"), "url"),
        ],
    )
    def test_bad_input_is_a_validation_error_naming_the_field(self, session, workspace, overrides, field):
        with pytest.raises(ApiError) as refused:
            create(session, workspace.id, **overrides)
        assert refused.value.status == 422 and refused.value.code == "validation_error"
        assert refused.value.body()["error"]["details"][0]["field"] == field
        assert session.execute(select(WebhookEndpoint)).scalars().all() == []

    def test_the_cli_refuses_an_unusable_host_in_one_line(self, capsys, database_url, monkeypatch):
        import uuid

        from socialpub.cli import main

        monkeypatch.setenv("DATABASE_URL", database_url)
        code = main(["webhook", "add", "--workspace", str(uuid.uuid4()), "--url", "http://a..b.com/"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        assert err.startswith("socialpub: error: The URL's host is not valid") and "empty label" in err

    def test_live_http_is_allowed_for_operator_allowed_hosts(self, session, workspace, monkeypatch):
        monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "hooks.internal")
        endpoint, _ = create(session, workspace.id, livemode=True, url="http://hooks.internal/receive")
        assert endpoint.url == "http://hooks.internal/receive"

    def test_an_unknown_workspace_is_not_found(self, session):
        import uuid

        with pytest.raises(ApiError) as refused:
            create(session, uuid.uuid4())
        assert refused.value.status == 404


class TestManage:
    def test_list_shows_both_modes(self, session, workspace):
        test, _ = create(session, workspace.id)
        live, _ = create(session, workspace.id, livemode=True)
        assert [e.id for e in webhook_endpoints.list_endpoints(session=session, actor=OPERATOR, workspace_id=workspace.id)] == [test.id, live.id]

    def test_disable_fails_pending_deliveries_and_enable_restores(self, db, session, workspace, wh_settings):
        endpoint, _ = create(session, workspace.id)
        events.record(session, workspace_id=workspace.id, livemode=False, type="post.published", data={})
        session.commit()
        fanout.fan_out_events(database=db, settings=wh_settings)
        webhook_endpoints.set_endpoint_enabled(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=endpoint.id, enabled=False)
        session.expire_all()
        assert not endpoint.enabled and endpoint.disabled_reason == "Disabled by a user."
        [delivery] = webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id)
        assert delivery.status == "failed" and delivery.last_error_code == "endpoint_disabled"
        webhook_endpoints.set_endpoint_enabled(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=endpoint.id, enabled=True)
        assert endpoint.enabled and endpoint.disabled_at is None
        # Now it can be resent: the same delivery, due again.
        resent = webhook_endpoints.resend_delivery(session=session, actor=OPERATOR, workspace_id=workspace.id, delivery_id=delivery.id)
        assert resent.id == delivery.id and resent.status == "pending" and resent.give_up_at is None

    def test_delete_removes_the_endpoint_and_its_deliveries(self, session, workspace):
        endpoint, _ = create(session, workspace.id)
        webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=endpoint.id)
        webhook_endpoints.delete_endpoint(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=endpoint.id)
        assert webhook_endpoints.list_endpoints(session=session, actor=OPERATOR, workspace_id=workspace.id) == []
        assert session.execute(select(WebhookDelivery)).scalars().all() == []

    def test_deliveries_are_listed_newest_first_and_by_endpoint(self, session, workspace):
        first, _ = create(session, workspace.id)
        second, _ = create(session, workspace.id)
        a = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=first.id)
        b = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=second.id)
        c = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=first.id)
        assert [d.id for d in webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id)] == [c.id, b.id, a.id]
        assert [d.id for d in webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=first.id)] == [c.id, a.id]
        assert [d.id for d in webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id, limit=1)] == [c.id]
        with pytest.raises(ApiError):
            webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id, limit=0)


class TestIsolation:
    def test_another_workspaces_endpoints_and_deliveries_are_not_found(self, session, workspace):
        other = make_workspace(session, name="Other")
        theirs, _ = create(session, other.id)
        their_delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=other.id, endpoint_id=theirs.id)
        mine, _ = create(session, workspace.id)
        webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=mine.id)

        assert [e.id for e in webhook_endpoints.list_endpoints(session=session, actor=OPERATOR, workspace_id=workspace.id)] == [mine.id]
        assert {d.endpoint_id for d in webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id)} == {mine.id}
        attempts = [
            lambda: webhook_endpoints.get_endpoint(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=theirs.id),
            lambda: webhook_endpoints.set_endpoint_enabled(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=theirs.id, enabled=False),
            lambda: webhook_endpoints.delete_endpoint(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=theirs.id),
            lambda: webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=theirs.id),
            lambda: webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=theirs.id),
            lambda: webhook_endpoints.get_delivery(session=session, actor=OPERATOR, workspace_id=workspace.id, delivery_id=their_delivery.id),
            lambda: webhook_endpoints.resend_delivery(session=session, actor=OPERATOR, workspace_id=workspace.id, delivery_id=their_delivery.id),
            lambda: webhook_endpoints.get_endpoint(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id="not-an-id"),
        ]
        for attempt in attempts:
            with pytest.raises(ApiError) as refused:
                attempt()
            assert refused.value.status == 404 and refused.value.code == "resource_not_found"
        session.expire_all()
        still = session.get(WebhookEndpoint, theirs.id)
        assert still is not None and still.enabled
        assert len(webhook_endpoints.list_deliveries(session=session, actor=OPERATOR, workspace_id=other.id)) == 1
