"""The security log (logger `socialpub.security`): sign-ins that succeed, fail or are
locked out, and every change made in the dashboard, each a structured record with
the member, workspace, client address and target; and no secret in any log record
of the whole run (passwords, key values, webhook secrets, account tokens, the
session cookie)."""
from __future__ import annotations

import logging
import re
import uuid

import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from socialpub.logs import JsonFormatter
from socialpub.security_events import security_event
from tests.support.dashboard import PASSWORD, Browser
from tests.support.webhook_receiver import Receiver

KEY_VALUE = re.compile(r'id="new-key-value"[^>]*value="(svc_(?:test|live)_[0-9A-Za-z]+)"')
WEBHOOK_SECRET = re.compile(r'id="signing-secret"[^>]*value="(whsec_[^"]+)"')
ACCOUNT_TOKEN = "tok-" + uuid.uuid4().hex
WRONG_PASSWORD = "wrong-" + uuid.uuid4().hex


@pytest.fixture
def security_log(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
def receiver(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with Receiver() as running:
        yield running


def an_address() -> str:
    number = uuid.uuid4().int
    return f"10.{number % 250}.{(number >> 8) % 250}.{(number >> 16) % 250 + 1}"


def events(caplog, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "socialpub.security" and getattr(r, "security_event", None) == name]


def the_event(caplog, name: str) -> logging.LogRecord:
    found = events(caplog, name)
    assert len(found) == 1, (name, [getattr(r, "security_event", r.getMessage()) for r in caplog.records])
    return found[0]


def test_sign_in_events(security_log, browser_for, member, workspace):
    attacker_address, owner_address = an_address(), an_address()
    attacker = browser_for(attacker_address)
    for _ in range(5):  # the default allowance per email from one address
        assert attacker.sign_in(member.email, WRONG_PASSWORD).status_code == 401
    assert attacker.sign_in(member.email, WRONG_PASSWORD).status_code == 429
    owner = browser_for(owner_address)
    assert owner.sign_in(member.email).status_code == 302

    failures = events(security_log, "sign_in.failed")
    assert len(failures) == 5
    assert all(r.client_address == attacker_address and r.email == member.email and r.member_id is None
               for r in failures)
    locked = the_event(security_log, "sign_in.locked_out")
    assert locked.client_address == attacker_address and locked.limit == "email_and_address" and locked.retry_after > 0
    succeeded = the_event(security_log, "sign_in.succeeded")
    assert (succeeded.member_id, succeeded.workspace_id, succeeded.client_address) == (
        str(member.id), str(workspace.id), owner_address)

    owner.get("/dashboard/")
    assert owner.post("/dashboard/sign-out", follow_redirects=False).status_code == 302
    signed_out = the_event(security_log, "sign_out")
    assert signed_out.member_id == str(member.id) and signed_out.client_address == owner_address
    assert_no_secret_logged(security_log, [PASSWORD, WRONG_PASSWORD], owner)


def test_a_password_typed_as_the_email_is_not_logged(security_log, browser_for):
    browser = browser_for(an_address())
    assert browser.sign_in(PASSWORD, WRONG_PASSWORD).status_code == 401
    failed = the_event(security_log, "sign_in.failed")
    assert not hasattr(failed, "email") and len(failed.email_hash) == 64
    assert_no_secret_logged(security_log, [PASSWORD, WRONG_PASSWORD], browser)


def test_every_change_is_an_event_with_who_where_and_what(security_log, browser_for, member, workspace, receiver, session):
    address = an_address()
    browser = browser_for(address)
    assert browser.sign_in(member.email).status_code == 302
    secrets = [PASSWORD, ACCOUNT_TOKEN]
    targets = {}

    # API keys: create, roll, revoke.
    browser.get("/dashboard/developers/api-keys")
    created = browser.post("/dashboard/developers/api-keys", {"name": "Scheduler", "mode": "test", "scopes": ["posts:read"]})
    secrets.append(KEY_VALUE.search(created.text).group(1))
    key_id = re.search(r'data-key-id="([^"]+)"', browser.get("/dashboard/developers/api-keys").text).group(1)
    rolled = browser.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "0"})
    secrets.append(KEY_VALUE.search(rolled.text).group(1))
    browser.post(f"/dashboard/developers/api-keys/{key_id}/revoke")
    targets.update({"api_key.created": key_id, "api_key.rolled": key_id, "api_key.revoked": key_id})

    # Webhooks: add, test, resend, disable, enable, delete.
    browser.get("/dashboard/developers/webhooks")
    added = browser.post("/dashboard/developers/webhooks", {"url": receiver.url, "description": "", "mode": "test"})
    secret = WEBHOOK_SECRET.search(added.text).group(1)
    receiver.secret = secret
    secrets.append(secret)
    endpoint_id = re.search(r"/dashboard/developers/webhooks/([0-9a-f-]{36})/test", added.text).group(1)
    tested = browser.post(f"/dashboard/developers/webhooks/{endpoint_id}/test", follow_redirects=True)
    delivery_id = re.search(r'data-delivery-id="([^"]+)"', tested.text).group(1)
    browser.post(f"/dashboard/developers/webhooks/deliveries/{delivery_id}/resend", follow_redirects=True)
    for action in ("disable", "enable", "delete"):
        browser.post(f"/dashboard/developers/webhooks/{endpoint_id}/{action}", follow_redirects=True)
    targets.update({"webhook.created": endpoint_id, "webhook.tested": endpoint_id, "webhook.resent": delivery_id,
                    "webhook.disabled": endpoint_id, "webhook.enabled": endpoint_id, "webhook.deleted": endpoint_id})

    # Accounts: connect (with a token) and disconnect.
    browser.get("/dashboard/accounts")
    connected = browser.post("/dashboard/accounts", {
        "platform": "mastodon", "mode": "live", "connector": "mastodon", "handle": "@acme@mastodon.social",
        "instance_url": "https://mastodon.social", "access_token": ACCOUNT_TOKEN}, follow_redirects=True)
    assert "Connected mastodon account" in connected.text
    account_id = str(session.execute(select(ConnectedAccount.id).where(
        ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.livemode.is_(True))).scalar_one())
    browser.post(f"/dashboard/accounts/{account_id}/disconnect", follow_redirects=True)
    targets.update({"account.connected": account_id, "account.disconnected": account_id})

    # Brand context.
    browser.get("/dashboard/brand-context")
    assert browser.post("/dashboard/brand-context", {"voice": "Plain"}, follow_redirects=True).status_code == 200
    targets["brand_context.updated"] = str(workspace.id)

    for name, target in targets.items():
        record = the_event(security_log, name)
        assert (record.member_id, record.workspace_id, record.client_address, record.target_id) == (
            str(member.id), str(workspace.id), address, target), name
    assert the_event(security_log, "account.connected").platform == "mastodon"
    assert the_event(security_log, "webhook.resent").endpoint_id == endpoint_id
    assert_no_secret_logged(security_log, secrets, browser)


def test_a_field_named_like_a_secret_is_refused():
    for field in ("secret", "password", "key_value", "session_cookie", "csrf_token"):
        with pytest.raises(ValueError, match="secret"):
            security_event("api_key.created", **{field: "x"})


def test_events_outside_a_request_carry_only_their_fields(caplog):
    caplog.set_level(logging.INFO, logger="socialpub.security")
    security_event("member.created", member_id="m-1", workspace_id="w-1")
    (record,) = caplog.records
    assert (record.security_event, record.member_id, record.workspace_id) == ("member.created", "m-1", "w-1")
    assert not hasattr(record, "client_address")


def assert_no_secret_logged(caplog, secrets: list[str], browser: Browser) -> None:
    """No secret in any record of any logger, as the JSON formatter would write it."""
    cookies = [cookie.value for cookie in browser.client.cookies.jar if cookie.name == "socialpub_session"]
    formatter = JsonFormatter()
    written = "\n".join(formatter.format(record) for record in caplog.records)
    for secret in [*secrets, *cookies]:
        assert secret and secret not in written, "a secret reached the log"
