"""The TikTok connector against a local fake of TikTok's Display API v2 and Login Kit."""
from __future__ import annotations

import dataclasses

import httpx
import pytest

from socialpub.config import OAUTH_ENDPOINTS
from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.connectors.tiktok import TikTokConnector
from tests.support.connectors import RecordingClient, assert_no_secret, platform_error
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET
from tests.support.fakes.tiktok import form_of

CONNECTOR = TikTokConnector  # what the `connector` fixture builds


def account(server, token=None, scopes=None) -> AccountCredentials:
    user_id = next(iter(server.users))
    access = token or server.issue(user_id, scopes)[0]
    return AccountCredentials(
        account_id="acc_tt", platform="tiktok", handle="@acme",
        options={"api_url": server.base_url + "/api", "open_id": user_id}, secrets={"access_token": access},
    )


def followers_error(connector, acct, code, **kwargs):
    return platform_error(lambda: connector.fetch_account_metrics(acct), code, **kwargs)


class TestNoTextPosts:
    def test_publish_and_comment_are_refused_for_good_without_a_call(self, connector, tiktok_server):
        acct = account(tiktok_server)
        for call in (lambda: connector.publish(acct, "Hello", idempotency_key="k"),
                     lambda: connector.comment(acct, parent=Published("1"), content="Hi", idempotency_key="c")):
            platform_error(call, "platform_rejected", transient=False, says="takes no text-only post")
        assert tiktok_server.calls_to("/api") == []
        assert (connector.publishes_text, connector.supports_comments, connector.reports_metrics) == (False, False, True)


class TestMetrics:
    def test_a_videos_counts(self, connector, tiktok_server):
        acct = account(tiktok_server)
        reading = connector.fetch_post_metrics(acct, tiktok_server.first_video())
        assert (reading.likes, reading.comments, reading.shares, reading.impressions, reading.reach) == (31, 4, 6, 1280, None)
        call = tiktok_server.calls_to("/v2/video/query/")[-1]
        assert call.method == "POST" and call.query["fields"] == "id,like_count,comment_count,share_count,view_count"
        assert call.body == {"filters": {"video_ids": [tiktok_server.first_video()]}}
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"

    def test_followers(self, connector, tiktok_server):
        assert connector.fetch_account_metrics(account(tiktok_server)).followers == tiktok_server.follower_count() == 5400
        assert tiktok_server.calls_to("/v2/user/info/")[-1].query == {"fields": "follower_count"}

    def test_a_video_tiktok_does_not_return_is_refused_for_good(self, connector, tiktok_server):
        other = tiktok_server.add_video("someone-else")
        platform_error(lambda: connector.fetch_post_metrics(account(tiktok_server), other), "platform_rejected",
                       transient=False, says="not found")

    def test_a_scope_not_granted_asks_to_connect_again_rather_than_refresh(self, connector, tiktok_server):
        acct = account(tiktok_server, scopes={"user.info.basic", "user.info.profile", "video.list"})
        error = followers_error(connector, acct, "platform_rejected", transient=False, says="scope_permission_missed")
        assert "connect the account again" in error.message and "log_id" in error.message
        acct = account(tiktok_server, scopes={"user.info.basic", "user.info.stats"})
        platform_error(lambda: connector.fetch_post_metrics(acct, tiktok_server.first_video()), "platform_rejected",
                       transient=False, says="scope_not_authorized")


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, tiktok_server):
        acct = account(tiktok_server, token="act.not-a-token-of-tiktok")
        error = followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True,
                                says="access token was refused")
        assert_no_secret(error, "act.not-a-token-of-tiktok")

    def test_an_expired_token_is_an_auth_failure(self, connector, tiktok_server):
        acct = account(tiktok_server)
        tiktok_server.expire_tokens()
        followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True)

    def test_a_rate_limit_waits_a_full_window_unless_told(self, connector, tiktok_server):
        tiktok_server.fail_next(1, 429)
        error = followers_error(connector, account(tiktok_server), "rate_limited", transient=True)
        assert error.retry_after == 60
        tiktok_server.fail_next(1, 429, headers={"Retry-After": "17"})
        assert followers_error(connector, account(tiktok_server), "rate_limited", transient=True).retry_after == 17

    def test_the_fakes_sliding_window_is_mapped(self, connector, tiktok_server, monkeypatch):
        monkeypatch.setattr("tests.support.fakes.tiktok.REQUESTS_PER_MINUTE", 2)
        acct = account(tiktok_server)
        connector.fetch_account_metrics(acct)
        connector.fetch_account_metrics(acct)
        followers_error(connector, acct, "rate_limited", transient=True, says="rate limit")

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, tiktok_server, status):
        tiktok_server.fail_next(1, status)
        followers_error(connector, account(tiktok_server), "platform_unavailable", transient=True)

    def test_an_error_reported_with_a_200_is_still_an_error(self, connector, tiktok_server):
        tiktok_server.fail_next(1, 200, {"data": {}, "error": {"code": "invalid_params", "message": "bad field",
                                                               "log_id": "L1"}})
        followers_error(connector, account(tiktok_server), "platform_rejected", transient=False, says="bad field")


class TestOAuth:
    def oauth_client(self, server) -> oauth.OAuthClient:
        return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                                 server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")

    def authorize(self, spec, server, verifier=None) -> str:
        url = oauth.authorization_url(spec, self.oauth_client(server), state="s-1", code_verifier=verifier)
        redirect = httpx.get(url, follow_redirects=False).headers["location"]
        return httpx.URL(redirect).params["code"]

    def test_the_flow_uses_client_key_and_comma_scopes_and_reads_the_user(self, connector, client, tiktok_server):
        url = httpx.URL(oauth.authorization_url(connector.oauth, self.oauth_client(tiktok_server), state="s-1",
                                                code_verifier=oauth.new_verifier()))
        assert url.params["client_key"] == CLIENT_ID and "client_id" not in url.params
        assert url.params["scope"] == "user.info.basic,user.info.profile,user.info.stats,video.list"
        assert "code_challenge" not in url.params
        code = self.authorize(connector.oauth, tiktok_server)
        tokens = oauth.exchange_code(connector.oauth, self.oauth_client(tiktok_server), client, code=code,
                                     code_verifier=None)
        form = form_of(tiktok_server.calls_to("/oauth/token")[-1])
        assert (form["client_key"], form["client_secret"], form["grant_type"]) == (
            CLIENT_ID, CLIENT_SECRET, "authorization_code")
        assert tokens.access_token and tokens.refresh_token and tokens.expires_at is not None
        assert tokens.extra["open_id"] == next(iter(tiktok_server.users))
        [identity] = connector.identities(api_url=tiktok_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.handle, identity.external_id) == ("@acme", next(iter(tiktok_server.users)))
        assert tiktok_server.calls_to("/v2/user/info/")[-1].query["fields"] == "open_id,union_id,display_name,username"
        with pytest.raises(PlatformError) as again:  # a code is good once
            oauth.exchange_code(connector.oauth, self.oauth_client(tiktok_server), client, code=code, code_verifier=None)
        assert getattr(again.value, "auth_failed", False)

    def test_an_rfc_pkce_challenge_is_not_tiktoks(self, client, tiktok_server):
        # TikTok's challenge is the hex SHA-256 of the verifier: Authlib's base64url one
        # is refused, which is why the connector sends none (web apps need none).
        spec = dataclasses.replace(TikTokConnector.oauth, pkce=True)
        verifier = oauth.new_verifier()
        code = self.authorize(spec, tiktok_server, verifier)
        with pytest.raises(PlatformError) as refused:
            oauth.exchange_code(spec, self.oauth_client(tiktok_server), client, code=code, code_verifier=verifier)
        assert refused.value.code == "platform_rejected" and "code challenge is invalid" in refused.value.message

    def test_refresh_tokens_rotate(self, connector, client, tiktok_server):
        _, first = tiktok_server.issue(next(iter(tiktok_server.users)))
        tokens = oauth.refresh(connector.oauth, self.oauth_client(tiktok_server), client, refresh_token=first)
        assert tokens.refresh_token and tokens.refresh_token != first
        assert tokens.secrets({"refresh_token": first})["refresh_token"] == tokens.refresh_token
        assert form_of(tiktok_server.calls_to("/oauth/token")[-1])["client_key"] == CLIENT_ID
        assert connector.fetch_account_metrics(account(tiktok_server, token=tokens.access_token)).followers == 5400
        with pytest.raises(PlatformError) as reused:  # the one sent stops working
            oauth.refresh(connector.oauth, self.oauth_client(tiktok_server), client, refresh_token=first)
        assert reused.value.auth_failed and first not in reused.value.message

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, tiktok_server):
        _, refresh = tiktok_server.issue(next(iter(tiktok_server.users)))
        tiktok_server.revoke_grants()
        with pytest.raises(PlatformError) as refused:
            oauth.refresh(connector.oauth, self.oauth_client(tiktok_server), client, refresh_token=refresh)
        assert refused.value.auth_failed
        assert_no_secret(refused.value, refresh, CLIENT_SECRET)


def test_the_default_api_url_is_where_the_paths_go():
    client = RecordingClient()
    with pytest.raises(PlatformError):
        TikTokConnector(client).identities(api_url=OAUTH_ENDPOINTS["tiktok"][3], access_token="act.x")
    assert client.sent == [("GET", "https://open.tiktokapis.com/v2/user/info/?fields=open_id,union_id,display_name,username")]
