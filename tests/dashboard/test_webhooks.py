"""Developers -> Webhooks: add an endpoint (secret shown once), send the test event to
a local receiver, the delivery log, resend, disable, delete; another workspace's
endpoints and deliveries out of reach."""
from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import func, select

from persistence.webhooks import WebhookDelivery, WebhookEndpoint
from socialpub.webhooks import endpoints as webhook_endpoints, signing
from tests.support.webhook_receiver import Answer, Receiver
from tests.support.factories import OPERATOR

SECRET = re.compile(r'id="signing-secret"[^>]*value="(whsec_[^"]+)"')


@pytest.fixture
def receiver(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with Receiver() as running:
        yield running


def add_endpoint(browser, **fields):
    browser.get("/dashboard/developers/webhooks")
    data = {"url": "https://hooks.example.com/in", "description": "", "mode": "test", **fields}
    return browser.post("/dashboard/developers/webhooks", data)


def endpoint_id(html: str) -> str:
    return re.search(r'/dashboard/developers/webhooks/([0-9a-f-]{36})/test', html).group(1)


def endpoints_of(session, workspace):
    session.expire_all()
    return list(session.execute(select(WebhookEndpoint).where(WebhookEndpoint.workspace_id == workspace.id)).scalars())


def test_test_event_reaches_the_receiver_signed_and_is_logged(signed_in, receiver, session, workspace):
    response = add_endpoint(signed_in, url=receiver.url, description="Our receiver", event_types=["post.published"])
    assert response.status_code == 200, response.text
    secret = SECRET.search(response.text).group(1)
    receiver.secret = secret
    assert "shown only this once" in response.text
    identifier = endpoint_id(response.text)
    assert secret not in signed_in.get(f"/dashboard/developers/webhooks/{identifier}").text

    sent = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/test", follow_redirects=True)
    assert sent.status_code == 200 and "Delivered test.ping" in sent.text
    delivered = receiver.received[-1]
    assert delivered.json["type"] == "test.ping" and delivered.json["data"] == {}
    assert delivered.verified
    log = sent.text[sent.text.index('data-testid="delivery-log"'):]
    assert "test.ping" in log and "succeeded" in log and ">200<" in log and " ms" in log

    delivery_id = re.search(r'data-delivery-id="([^"]+)"', log).group(1)
    resent = signed_in.post(f"/dashboard/developers/webhooks/deliveries/{delivery_id}/resend", follow_redirects=True)
    assert "Delivered test.ping" in resent.text and len(receiver.received) == 2
    assert all(request.verified for request in receiver.received)
    session.expire_all()
    assert session.get(WebhookDelivery, uuid.UUID(delivery_id)).attempts == 2


def test_the_secret_is_shown_after_a_redirect_and_reloading_neither_shows_nor_adds_again(signed_in, session, workspace):
    signed_in.get("/dashboard/developers/webhooks")
    data = {"url": "https://hooks.example.com/in", "description": "", "mode": "test"}
    posted = signed_in.post("/dashboard/developers/webhooks", data, follow_redirects=False)
    assert posted.status_code == 303
    (endpoint,) = endpoints_of(session, workspace)
    assert posted.headers["location"].endswith(f"/dashboard/developers/webhooks/{endpoint.id}")
    shown = signed_in.get(posted.headers["location"]).text
    secret = SECRET.search(shown).group(1)
    assert signing.endpoint_secret(endpoint) == secret
    assert secret not in posted.headers.get("set-cookie", "")
    reloaded = signed_in.get(posted.headers["location"]).text
    assert secret not in reloaded and 'id="signing-secret"' not in reloaded
    assert len(endpoints_of(session, workspace)) == 1


def test_failed_test_event_says_why(signed_in, receiver):
    receiver.script(Answer(500))
    identifier = endpoint_id(add_endpoint(signed_in, url=receiver.url).text)
    sent = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/test", follow_redirects=True)
    assert "did not succeed" in sent.text and ">500<" in sent.text


@pytest.mark.parametrize("host", ["a..b.com", "a" * 64 + ".example"])
def test_test_event_and_resend_to_an_unusable_host_say_why(signed_in, session, workspace, host):
    identifier = endpoint_id(add_endpoint(signed_in).text)
    # An endpoint stored before such hosts were refused when it is added.
    endpoint = session.get(WebhookEndpoint, uuid.UUID(identifier))
    endpoint.url = f"https://{host}/in"
    session.commit()
    sent = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/test", follow_redirects=True)
    assert sent.status_code == 200 and "did not succeed" in sent.text and "not a usable host name" in sent.text
    delivery_id = re.search(r'data-delivery-id="([^"]+)"', sent.text).group(1)
    resent = signed_in.post(f"/dashboard/developers/webhooks/deliveries/{delivery_id}/resend", follow_redirects=True)
    assert resent.status_code == 200 and "not a usable host name" in resent.text
    session.expire_all()
    delivery = session.get(WebhookDelivery, uuid.UUID(delivery_id))
    assert delivery.status == "failed" and delivery.attempts == 2 and delivery.lease_until is None


def test_disable_enable_and_delete(signed_in, session, workspace):
    identifier = endpoint_id(add_endpoint(signed_in).text)
    disabled = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/disable", follow_redirects=True)
    assert "Disabled the endpoint" in disabled.text and not endpoints_of(session, workspace)[0].enabled
    enabled = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/enable", follow_redirects=True)
    assert "Enabled the endpoint" in enabled.text and endpoints_of(session, workspace)[0].enabled
    deleted = signed_in.post(f"/dashboard/developers/webhooks/{identifier}/delete", follow_redirects=True)
    assert "Deleted the endpoint" in deleted.text and endpoints_of(session, workspace) == []


def test_bad_input_is_refused_and_changes_nothing(signed_in, session, workspace):
    for fields, message in (
        ({"url": ""}, "Enter the URL"),
        ({"url": "ftp://example.com/x"}, "must start with https://"),
        ({"url": "http://hooks.example.com/in", "mode": "live"}, "must use https://"),
        ({"event_types": ["post.exploded"]}, "is not a valid choice"),
        ({"description": "x" * 501}, "500"),
        ({"url": "https://hooks..example.com/in"}, "empty label"),
    ):
        response = add_endpoint(signed_in, **fields)
        assert response.status_code == 422, fields
        assert message in response.text, (fields, message)
    assert endpoints_of(session, workspace) == []


def test_another_workspaces_endpoints_are_out_of_reach(signed_in, session, other_workspace):
    theirs, _ = webhook_endpoints.create_endpoint(session=session, actor=OPERATOR, workspace_id=other_workspace.id, livemode=False,
                                         url="https://theirs.example.com/in", description=None, event_types=None)
    delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=other_workspace.id, endpoint_id=theirs.id)
    assert "theirs.example.com" not in signed_in.get("/dashboard/developers/webhooks").text
    assert signed_in.get(f"/dashboard/developers/webhooks/{theirs.id}").status_code == 404
    signed_in.get("/dashboard/developers/webhooks")
    for action in ("test", "disable", "delete"):
        assert signed_in.post(f"/dashboard/developers/webhooks/{theirs.id}/{action}").status_code == 404, action
    assert signed_in.post(f"/dashboard/developers/webhooks/deliveries/{delivery.id}/resend").status_code == 404
    session.expire_all()
    assert session.get(WebhookEndpoint, theirs.id).enabled
    count = session.execute(select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.endpoint_id == theirs.id)).scalar_one()
    assert count == 1
