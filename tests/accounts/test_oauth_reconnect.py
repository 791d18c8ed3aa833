"""Connecting an OAuth account again updates the same account and never drops a
refresh token the platform did not send again (Google, for one, sends it only at the
first consent); a refresh that rotates the refresh token stores the new one with the
new access token, in one transaction."""
from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from socialpub import crypto
from socialpub.accounts import oauth
from tests.support.factories import OPERATOR
from tests.support.settings import test_settings


@pytest.fixture
def settings(database_url, test_redis_url, x_server, monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    return test_settings(database_url, test_redis_url, **x_server.setting_values("twitter"),
                         oauth_redirect_url="https://app.example.com/cb")


def connect(session, workspace, settings) -> ConnectedAccount:
    url = oauth.start_authorization(session=session, actor=OPERATOR, workspace_id=workspace.id, platform="twitter",
                                    settings=settings, bound_to="cli")
    callback = httpx.get(url, follow_redirects=False).headers["location"]
    return oauth.complete_authorization(session=session, actor=OPERATOR, workspace_id=workspace.id, platform="twitter",
                                        callback_url=callback, settings=settings, bound_to="cli").account


def secrets_of(session, account) -> dict:
    session.expire_all()
    return crypto.decrypt_json(session.get(ConnectedAccount, account.id).secrets_encrypted)


def test_connecting_again_keeps_a_refresh_token_not_sent_again(session, workspace, settings, x_server):
    first = connect(session, workspace, settings)
    refresh = secrets_of(session, first)["refresh_token"]
    x_server.issues_refresh_tokens = False
    again = connect(session, workspace, settings)
    assert again.id == first.id
    kept = secrets_of(session, again)
    assert kept["refresh_token"] == refresh
    assert len(session.execute(select(ConnectedAccount).where(ConnectedAccount.external_id.is_not(None))).all()) == 1


def test_a_rotated_refresh_token_is_stored_with_the_access_token(db, session, workspace, settings, x_server):
    x_server.rotates_refresh_tokens = True
    account = connect(session, workspace, settings)
    before = secrets_of(session, account)
    session.get(ConnectedAccount, account.id).refresh_due_at = session.get(ConnectedAccount, account.id).created_at
    session.commit()
    assert oauth.refresh_due_tokens(database=db, settings=settings) == 1
    after = secrets_of(session, account)
    assert after["refresh_token"] != before["refresh_token"] and after["access_token"] != before["access_token"]
    assert after["refresh_token"] in x_server.refresh_tokens and before["refresh_token"] not in x_server.refresh_tokens
    # One refresher at a time: a second run finds nothing due.
    assert oauth.refresh_due_tokens(database=db, settings=settings) == 0
