"""Connecting an OAuth platform's account in the dashboard: Connected accounts ->
Connect X -> X (its local fake, which consents at once) -> back to the callback page,
which connects the account; a callback for the CLI shows the command that completes
it; an unknown, used or another session's state connects nothing."""
from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from tests.support.settings import test_settings

CALLBACK = "http://localhost/dashboard/accounts/oauth/callback"


@pytest.fixture
def settings(database_url, test_redis_url, x_server, monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    return test_settings(database_url, test_redis_url, **x_server.setting_values("twitter"), oauth_redirect_url=CALLBACK)


def _to_the_platform_and_back(signed_in, platform="twitter") -> str:
    page = signed_in.get("/dashboard/accounts").text
    assert "Connect X" in page and "LinkedIn: not configured" in page
    started = signed_in.post(f"/dashboard/accounts/oauth/{platform}/start", follow_redirects=False)
    assert started.status_code == 303
    granted = httpx.get(started.headers["location"], follow_redirects=False)
    assert granted.status_code == 302 and granted.headers["location"].startswith(CALLBACK + "?")
    return granted.headers["location"][len("http://localhost"):]


def live_accounts(session, workspace):
    session.expire_all()
    return list(session.execute(select(ConnectedAccount).where(
        ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.livemode.is_(True))).scalars())


def test_a_member_connects_an_account_through_the_platform(signed_in, session, workspace):
    callback = _to_the_platform_and_back(signed_in)
    connected = signed_in.get(callback, follow_redirects=True)
    assert "Connected twitter account @acme (live mode)." in connected.text
    [account] = live_accounts(session, workspace)
    assert (account.handle, account.status, account.external_id) == ("@acme", "active", "2244994945")
    # The state was good once.
    again = signed_in.get(callback)
    assert again.status_code == 400 and "already used" in again.text
    assert len(live_accounts(session, workspace)) == 1


def test_another_members_session_cannot_complete_it(signed_in, browser_for, session, workspace):
    from tests.support.dashboard import make_member

    callback = _to_the_platform_and_back(signed_in)
    other = browser_for()
    assert other.sign_in(make_member(session, workspace).email).status_code == 302
    refused = other.get(callback)
    assert refused.status_code == 403
    assert live_accounts(session, workspace) == []
    # The member who started it still can.
    assert "Connected twitter account" in signed_in.get(callback, follow_redirects=True).text


def test_an_authorization_of_the_cli_shows_the_command_that_completes_it(client, session, workspace, settings):
    from socialpub.accounts import oauth
    from tests.support.factories import OPERATOR

    url = oauth.start_authorization(session=session, actor=OPERATOR, workspace_id=workspace.id, platform="twitter",
                                    settings=settings, bound_to="cli")
    callback = httpx.get(url, follow_redirects=False).headers["location"][len("http://localhost"):]
    page = client.get(callback)
    assert page.status_code == 200
    assert "socialpub account complete" in page.text and "--platform twitter" in page.text
    assert live_accounts(session, workspace) == []


def test_an_unknown_state_connects_nothing(signed_in, session, workspace):
    answer = signed_in.get("/dashboard/accounts/oauth/callback?state=nope&code=x")
    assert answer.status_code == 400
    assert live_accounts(session, workspace) == []
