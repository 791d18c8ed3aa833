"""An operator connects an account of each OAuth platform with the CLI, against the
platform's local fake, and the account then publishes, refreshes its token and is
connected again, as in production:

authorize (the URL) -> the platform redirects -> complete (the callback URL) -> a
live post and its first comment go out -> the access token expires: the platform's
401 is followed by a refresh and the post goes out -> the user revokes the app: the
refresh is refused, the account needs to be connected again and its targets fail with
account_needs_reauth -> connecting it again makes it active, the same account."""
from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.db import Database
from socialpub import clock, crypto
from socialpub.accounts import oauth
from socialpub.accounts import service as accounts
from socialpub.app import create_app
from socialpub.connectors.base import PlatformError
from socialpub.connectors.registry import connector_for
from socialpub.platforms import RULES
from tests.support.cli import cli_database, run, run_json, workspace_id  # noqa: F401 - fixtures
from tests.support.fakes import OAUTH_FAKES
from tests.support.publishing import Pipeline
from tests.support.settings import test_settings

REDIRECT = "https://app.example.com/dashboard/accounts/oauth/callback"
NOW = dt.datetime(2027, 5, 3, 9, 0, tzinfo=dt.timezone.utc)


TEXT_PLATFORMS = [platform for platform in OAUTH_FAKES if RULES[platform].text_posts]
MEDIA_ONLY = [platform for platform in OAUTH_FAKES if not RULES[platform].text_posts]


@pytest.fixture
def connected_platform(request, cli_database, workspace_id, capsys, monkeypatch):
    platform = request.param
    fake = OAUTH_FAKES[platform]().start()
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SOCIALPUB_OAUTH_REDIRECT_URL", REDIRECT)
    for name, value in fake.settings(platform).items():
        monkeypatch.setenv(name, value)
    installed = clock.installed(clock.FakeClock(NOW))
    now = installed.__enter__()
    try:
        yield platform, fake, now
    finally:
        installed.__exit__(None, None, None)
        fake.stop()
        assert not fake.server_errors, fake.server_errors


def _connect(capsys, workspace_id, platform) -> dict:
    started = run_json(capsys, "account", "authorize", "--workspace", workspace_id, "--platform", platform)
    answer = httpx.get(started["authorizationUrl"], follow_redirects=False)
    assert answer.status_code == 302, answer.text
    callback = answer.headers["location"]
    assert callback.startswith(REDIRECT + "?")
    completed = run_json(capsys, "account", "complete", "--workspace", workspace_id, "--platform", platform,
                         "--callback-url", callback)
    if "choices" not in completed:
        return completed
    # Several identities (a user's Facebook pages): the operator picks the first.
    return run_json(capsys, "account", "choose", "--workspace", workspace_id, "--authorization",
                    completed["authorization"], "--identity", completed["choices"][0]["id"])


@pytest.mark.parametrize("connected_platform", TEXT_PLATFORMS, indirect=True)
def test_an_operator_connects_and_the_account_publishes_refreshes_and_reconnects(
    connected_platform, cli_database, workspace_id, capsys,
):
    platform, fake, now = connected_platform
    account = _connect(capsys, workspace_id, platform)
    assert (account["platform"], account["mode"], account["status"], account["handle"]) == (
        platform, "live", "active", fake.expected_handle,
    )
    key = run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "live", "--all-scopes", "--mode", "live")
    headers = {"Authorization": f"Bearer {key['key']}"}
    database = Database(cli_database)
    settings = test_settings(cli_database, None, **fake.setting_values(platform), oauth_redirect_url=REDIRECT,
                             inline_job_workers=1)
    app = create_app(settings, database=database)
    runtime = app.app.extensions["socialpub"]
    pipeline = Pipeline(runtime, database)
    try:
        with app.test_client() as client:
            def publish(text: str, first_comment: str | None = None) -> dict:
                post = client.post("/api/v1/posts", headers=headers, json={"content": text, "platforms": [platform]})
                assert post.status_code == 201, post.text
                post_id = post.json()["data"]["id"]
                if first_comment:
                    put = client.put(f"/api/v1/posts/{post_id}/first-comment", headers=headers,
                                     json={"content": first_comment})
                    assert put.status_code == 200, put.text
                assert client.post(f"/api/v1/posts/{post_id}/publish", headers=headers).status_code == 202
                pipeline.run()
                return client.get(f"/api/v1/posts/{post_id}", headers=headers).json()["data"]

            first = publish("Hello from the journey", first_comment="More in the thread")
            assert first["status"] == "published", first
            assert fake.published_texts() == ["Hello from the journey"]
            if RULES[platform].replies:
                assert fake.reply_texts() == ["More in the thread"]

            if not fake.refreshes_refused_tokens:
                # A refused token that cannot be refreshed (Facebook's page tokens; Threads'
                # and Instagram's, renewed only while they are valid): the post fails, the
                # account needs to be connected again, and then publishes.
                fake.expire_tokens()
                refused = publish("After the token expired")
                oauth.refresh_due_tokens(database=database, settings=settings)
                now.advance(120)
                pipeline.run()
                refused = client.get(f"/api/v1/posts/{refused['id']}", headers=headers).json()["data"]
                assert refused["status"] == "failed", refused
                assert refused["targets"][0]["error"]["code"] in ("platform_auth_failed", "account_needs_reauth"), refused
                listed = run_json(capsys, "account", "list", "--workspace", workspace_id, "--mode", "live")["accounts"]
                assert [row["status"] for row in listed] == ["needs_reauth"]
                again = _connect(capsys, workspace_id, platform)
                assert again["id"] == account["id"] and again["status"] == "active"
                assert publish("After connecting again")["status"] == "published"
                assert fake.published_texts()[-1] == "After connecting again"
                return

            # The access token expires: the platform's 401 is followed by a refresh.
            fake.expire_tokens()
            second = publish("After the token expired")
            assert second["status"] == "scheduled" and second["targets"][0]["status"] == "pending", second
            assert oauth.refresh_due_tokens(database=database, settings=settings) == 1
            now.advance(120)
            pipeline.run()
            second = client.get(f"/api/v1/posts/{second['id']}", headers=headers).json()["data"]
            assert second["status"] == "published", second
            assert fake.published_texts()[-1] == "After the token expired"

            # The user revokes the app: the refresh is refused.
            fake.revoke_grants()
            fake.expire_tokens()
            third = publish("After the app was revoked")
            assert oauth.refresh_due_tokens(database=database, settings=settings) == 0
            now.advance(120)
            pipeline.run()
            third = client.get(f"/api/v1/posts/{third['id']}", headers=headers).json()["data"]
            assert third["status"] == "failed"
            assert third["targets"][0]["error"]["code"] == "account_needs_reauth", third
            listed = run_json(capsys, "account", "list", "--workspace", workspace_id, "--mode", "live")["accounts"]
            assert [row["status"] for row in listed] == ["needs_reauth"]

            # Connected again: the same account, active, with a refresh token.
            fake.revoked = False
            again = _connect(capsys, workspace_id, platform)
            assert again["id"] == account["id"] and again["status"] == "active"
            with database.transaction() as session:
                stored = session.execute(select(ConnectedAccount).where(ConnectedAccount.platform == platform,
                                                                        ConnectedAccount.livemode.is_(True))).scalar_one()
                assert crypto.decrypt_json(stored.secrets_encrypted).get("refresh_token")
                assert stored.refresh_due_at is not None
    finally:
        runtime.queue.close()
        database.dispose()


@pytest.mark.parametrize("connected_platform", TEXT_PLATFORMS + MEDIA_ONLY, indirect=True)
def test_a_state_is_used_once_and_only_by_whom_it_was_given(connected_platform, cli_database, workspace_id, capsys):
    platform, fake, now = connected_platform
    started = run_json(capsys, "account", "authorize", "--workspace", workspace_id, "--platform", platform)
    callback = httpx.get(started["authorizationUrl"], follow_redirects=False).headers["location"]
    forged = callback.replace("state=", "state=x")
    refused = run(capsys, "account", "complete", "--workspace", workspace_id, "--platform", platform, "--callback-url", forged)
    assert refused.code == 2 and "unknown or was already used" in refused.err
    assert run(capsys, "account", "complete", "--workspace", workspace_id, "--platform", platform,
               "--callback-url", callback).code == 0
    replayed = run(capsys, "account", "complete", "--workspace", workspace_id, "--platform", platform,
                   "--callback-url", callback)
    assert replayed.code == 2 and "unknown or was already used" in replayed.err
    # An authorization left for more than 10 minutes has expired.
    started = run_json(capsys, "account", "authorize", "--workspace", workspace_id, "--platform", platform)
    callback = httpx.get(started["authorizationUrl"], follow_redirects=False).headers["location"]
    now.advance(601)
    late = run(capsys, "account", "complete", "--workspace", workspace_id, "--platform", platform, "--callback-url", callback)
    assert late.code == 2 and "expired" in late.err


@pytest.mark.parametrize("connected_platform", MEDIA_ONLY, indirect=True)
def test_a_media_only_account_connects_for_metrics_and_takes_no_post(
    connected_platform, cli_database, workspace_id, capsys,
):
    platform, fake, now = connected_platform
    account = _connect(capsys, workspace_id, platform)
    assert (account["platform"], account["mode"], account["status"], account["handle"]) == (
        platform, "live", "active", fake.expected_handle,
    )
    key = run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "live", "--all-scopes", "--mode", "live")
    database = Database(cli_database)
    settings = test_settings(cli_database, None, **fake.setting_values(platform), oauth_redirect_url=REDIRECT)
    app = create_app(settings, database=database)
    try:
        with app.test_client() as client:
            refused = client.post("/api/v1/posts", headers={"Authorization": f"Bearer {key['key']}"}, json={
                "content": "Needs a picture", "platforms": [platform], "scheduledAt": (NOW + dt.timedelta(days=1)).isoformat(),
            })
            assert refused.status_code == 422 and "text-only post" in refused.json()["error"]["message"]

        def followers() -> int:
            with database.transaction() as session:
                stored = session.get(ConnectedAccount, uuid.UUID(account["id"]))
                credentials = accounts.credentials_for(stored)
            return connector_for(platform).fetch_account_metrics(credentials).followers

        assert followers() == fake.follower_count()
        # Its token refused: refreshed, then measured again.
        fake.expire_tokens()
        with pytest.raises(PlatformError) as refused_token:
            followers()
        assert refused_token.value.auth_failed
        with database.transaction() as session:
            refreshing = accounts.token_refused(session.get(ConnectedAccount, uuid.UUID(account["id"])), "refused")
        refreshed = oauth.refresh_due_tokens(database=database, settings=settings)
        if fake.refreshes_refused_tokens:
            assert refreshing is True and refreshed == 1
        else:
            # Renewed only while valid (Instagram): the account is connected again.
            assert refreshed == 0
            listed = run_json(capsys, "account", "list", "--workspace", workspace_id, "--mode", "live")["accounts"]
            assert [row["status"] for row in listed] == ["needs_reauth"]
            assert _connect(capsys, workspace_id, platform)["id"] == account["id"]
        assert followers() == fake.follower_count()
    finally:
        app.app.extensions["socialpub"].queue.close()
        database.dispose()


def test_a_platform_without_a_client_is_shown_as_not_configured(cli_database, capsys, monkeypatch, workspace_id):
    monkeypatch.delenv("SOCIALPUB_TWITTER_CLIENT_ID", raising=False)
    monkeypatch.setenv("SOCIALPUB_LINKEDIN_CLIENT_ID", "configured")
    rows = {row["platform"]: row["configured"] for row in run_json(capsys, "account", "platforms")["platforms"]}
    assert rows["twitter"] is False and rows["linkedin"] is True
    refused = run(capsys, "account", "authorize", "--workspace", workspace_id, "--platform", "twitter")
    assert refused.code == 2 and "X is not configured" in refused.err


@pytest.mark.parametrize("connected_platform", ["linkedin"], indirect=True)
def test_scopes_the_app_was_approved_for_are_asked_for_and_read_metrics(
    connected_platform, cli_database, workspace_id, capsys, monkeypatch,
):
    platform, fake, _ = connected_platform

    def followers(account: dict):
        database = Database(cli_database)
        try:
            with database.transaction() as session:
                credentials = accounts.credentials_for(session.get(ConnectedAccount, uuid.UUID(account["id"])))
            return connector_for(platform).fetch_account_metrics(credentials)
        finally:
            database.dispose()

    # A standard app: posting only, and LinkedIn reports no metrics.
    assert followers(_connect(capsys, workspace_id, platform)) is None
    # LinkedIn approved the app for its metrics scopes, and the operator names them.
    fake.app_scopes = fake.app_scopes | {"r_member_social", "r_member_profileAnalytics"}
    monkeypatch.setenv("SOCIALPUB_LINKEDIN_EXTRA_SCOPES", "r_member_social,r_member_profileAnalytics")
    started = run_json(capsys, "account", "authorize", "--workspace", workspace_id, "--platform", platform)
    assert httpx.URL(started["authorizationUrl"]).params["scope"] == (
        "openid profile w_member_social r_member_social r_member_profileAnalytics")
    account = _connect(capsys, workspace_id, platform)
    assert followers(account).followers == fake.follower_count()
