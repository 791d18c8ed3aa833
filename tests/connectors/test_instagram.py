"""The Instagram connector against a local fake of the Instagram API with Instagram
Login (Business Login, Instagram's token calls, the Graph API)."""
from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from socialpub import clock
from socialpub.config import OAUTH_ENDPOINTS
from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.connectors.instagram import TOKENS, InstagramConnector
from tests.support.connectors import RecordingClient, assert_no_secret, platform_error
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET

CONNECTOR = InstagramConnector  # what the `connector` fixture builds
# The code exchange alone, whatever token keeping the connector's spec adds to it.
TOKEN_ENDPOINT_ONLY = oauth.OAuthSpec(platform="instagram", label="Instagram", scopes=InstagramConnector.oauth.scopes,
                                      pkce=False, token_auth="client_secret_post", scope_separator=",")


def account(server, token=None, scopes=None) -> AccountCredentials:
    user_id = next(iter(server.users))
    access = token or server.issue_long_lived(user_id, scopes)
    return AccountCredentials(
        account_id="acc_ig", platform="instagram", handle="@acme",
        options={"api_url": server.base_url + "/api", "user_id": user_id}, secrets={"access_token": access},
    )


def followers_error(connector, acct, code, **kwargs):
    return platform_error(lambda: connector.fetch_account_metrics(acct), code, **kwargs)


def oauth_client(server) -> oauth.OAuthClient:
    return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                             server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")


class TestNoTextPosts:
    def test_publish_and_comment_are_refused_for_good_without_a_call(self, connector, instagram_server):
        acct = account(instagram_server)
        for call in (lambda: connector.publish(acct, "Hello", idempotency_key="k"),
                     lambda: connector.comment(acct, parent=Published("1"), content="Hi", idempotency_key="c")):
            platform_error(call, "platform_rejected", transient=False, says="takes no text-only post")
        assert instagram_server.calls_to("/api") == []
        assert (connector.publishes_text, connector.reports_metrics) == (False, True)


class TestMetrics:
    def test_a_posts_insights(self, connector, instagram_server):
        acct = account(instagram_server)
        media = instagram_server.first_media()
        reading = connector.fetch_post_metrics(acct, media)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions, reading.reach) == (12, 3, 2, 410, 240)
        call = instagram_server.calls_to("/insights")[-1]
        assert call.path == f"/api/{media}/insights" and call.query == {"metric": "likes,comments,shares,reach,views"}
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"

    def test_metrics_instagram_has_no_data_for_are_unknown_not_zero(self, connector, instagram_server):
        media = instagram_server.add_media(next(iter(instagram_server.users)))
        instagram_server.media[media]["metrics"] = {}  # Instagram answers an empty set, not zeros
        reading = connector.fetch_post_metrics(account(instagram_server), media)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions, reading.reach) == (0, 0, 0, None, None)

    def test_followers(self, connector, instagram_server):
        assert connector.fetch_account_metrics(account(instagram_server)).followers == instagram_server.follower_count()
        assert instagram_server.calls_to("/api/me")[-1].query == {"fields": "followers_count"}

    def test_another_accounts_post_is_refused_for_good(self, connector, instagram_server):
        other = instagram_server.add_media("17841499999999999")
        platform_error(lambda: connector.fetch_post_metrics(account(instagram_server), other), "platform_rejected",
                       transient=False, says="does not exist")

    def test_a_permission_not_granted_asks_to_connect_again(self, connector, instagram_server):
        acct = account(instagram_server, scopes={"instagram_business_basic"})
        error = platform_error(lambda: connector.fetch_post_metrics(acct, instagram_server.first_media()),
                               "platform_rejected", transient=False, says="connect the account again")
        assert "(#10)" in error.message


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, instagram_server):
        # Graph answers a bad token with 400 and code 190: the code decides.
        acct = account(instagram_server, token="IGAA-not-a-token-of-instagram")
        error = followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True)
        assert instagram_server.calls_to("/api/me")[-1] and "access token was refused" in error.message
        assert_no_secret(error, "IGAA-not-a-token-of-instagram")

    def test_an_expired_token_is_an_auth_failure(self, connector, instagram_server):
        acct = account(instagram_server)
        instagram_server.expire_tokens()
        followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True, says="expired")

    def test_the_business_use_case_limit_waits_the_time_instagram_gives(self, connector, instagram_server, monkeypatch):
        monkeypatch.setattr("tests.support.fakes.instagram.CALLS_PER_HOUR", 1)
        acct = account(instagram_server)
        connector.fetch_account_metrics(acct)
        error = followers_error(connector, acct, "rate_limited", transient=True, says="too many calls")
        assert error.retry_after == 60 * 60  # estimated_time_to_regain_access: 60 minutes

    def test_a_throttle_code_without_the_header_takes_retry_after(self, connector, instagram_server):
        instagram_server.fail_next(1, 403, {"error": {"message": "(#4) Application request limit reached",
                                                      "type": "OAuthException", "code": 4}},
                                   headers={"Retry-After": "30"})
        assert followers_error(connector, account(instagram_server), "rate_limited", transient=True).retry_after == 30
        usage = {"1": [{"type": "instagram", "estimated_time_to_regain_access": 2}]}
        instagram_server.fail_next(1, 400, {"error": {"message": "(#80002) too many calls", "code": 80002}},
                                   headers={"X-Business-Use-Case-Usage": json.dumps(usage)})
        assert followers_error(connector, account(instagram_server), "rate_limited", transient=True).retry_after == 120

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, instagram_server, status):
        instagram_server.fail_next(1, status)
        followers_error(connector, account(instagram_server), "platform_unavailable", transient=True)

    def test_a_transient_graph_error_with_a_400_is_transient(self, connector, instagram_server):
        instagram_server.fail_next(1, 400, {"error": {"message": "Please retry", "code": 1, "is_transient": True}})
        followers_error(connector, account(instagram_server), "platform_unavailable", transient=True)


class TestOAuth:
    def authorize(self, connector, server) -> str:
        url = httpx.URL(oauth.authorization_url(connector.oauth, oauth_client(server), state="s-1",
                                                code_verifier=oauth.new_verifier()))
        assert (url.params["client_id"], url.params["response_type"]) == (CLIENT_ID, "code")
        assert url.params["scope"] == "instagram_business_basic,instagram_business_manage_insights"
        assert "code_challenge" not in url.params
        redirect = httpx.get(str(url), follow_redirects=False).headers["location"]
        return httpx.URL(redirect).params["code"]

    def test_the_code_exchange_answers_a_short_lived_token_that_reads_the_account(self, connector, client,
                                                                                  instagram_server):
        code = self.authorize(connector, instagram_server)
        assert connector.oauth.scopes == TOKEN_ENDPOINT_ONLY.scopes and connector.token_keeper is TOKENS
        tokens = oauth.exchange_code(TOKEN_ENDPOINT_ONLY, oauth_client(instagram_server), client, code=code,
                                     code_verifier=None)
        form = instagram_server.calls_to("/oauth/token")[-1].raw.decode()
        assert f"client_id={CLIENT_ID}" in form and f"client_secret={CLIENT_SECRET}" in form
        assert "authorization" not in instagram_server.calls_to("/oauth/token")[-1].headers
        # Short-lived: no expiry given, no refresh token.
        assert tokens.access_token and tokens.refresh_token is None and tokens.expires_at is None
        assert str(tokens.extra["user_id"]) == next(iter(instagram_server.users))
        [identity] = connector.identities(api_url=instagram_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.handle, identity.external_id) == ("@acme", next(iter(instagram_server.users)))
        assert instagram_server.calls_to("/api/me")[-1].query == {"fields": "user_id,username"}

    def test_the_short_lived_token_is_extended_to_60_days(self, connector, client, instagram_server):
        code = self.authorize(connector, instagram_server)
        short = oauth.exchange_code(TOKEN_ENDPOINT_ONLY, oauth_client(instagram_server), client, code=code,
                                    code_verifier=None)
        tokens = TOKENS.after_exchange(oauth_client(instagram_server), client, short)
        call = instagram_server.calls_to("/access_token")[-1]
        assert call.method == "GET" and call.query == {
            "grant_type": "ig_exchange_token", "client_secret": CLIENT_SECRET, "access_token": short.access_token}
        assert tokens.access_token != short.access_token and tokens.refresh_token == tokens.access_token
        assert dt.timedelta(days=59) < tokens.expires_at - clock.now() < dt.timedelta(days=61)
        assert tokens.scope == "instagram_business_basic,instagram_business_manage_insights"
        assert tokens.extra == {"user_id": short.extra["user_id"]}
        assert connector.fetch_account_metrics(account(instagram_server, token=tokens.access_token)).followers == 1500

    def test_a_token_that_cannot_be_extended_is_an_auth_failure_without_secrets(self, client, instagram_server):
        short = oauth.TokenSet(access_token="IGQ-short-and-unknown", refresh_token=None, expires_at=None)
        with pytest.raises(PlatformError) as refused:
            TOKENS.after_exchange(oauth_client(instagram_server), client, short)
        assert refused.value.auth_failed
        assert_no_secret(refused.value, "IGQ-short-and-unknown", CLIENT_SECRET)

    def test_a_long_lived_token_is_refreshed_with_ig_refresh_token(self, connector, client, instagram_server):
        token = instagram_server.issue_long_lived(next(iter(instagram_server.users)))
        tokens = TOKENS.refresh(oauth_client(instagram_server), client, refresh_token=token)
        assert instagram_server.calls_to("/refresh_access_token")[-1].query == {
            "grant_type": "ig_refresh_token", "access_token": token}
        assert tokens.refresh_token == tokens.access_token != token and tokens.expires_at is not None
        assert connector.fetch_account_metrics(account(instagram_server, token=tokens.access_token)).followers == 1500

    @pytest.mark.parametrize("switch", ["expire_tokens", "revoke_grants"])
    def test_an_expired_or_revoked_token_cannot_be_refreshed(self, client, instagram_server, switch):
        token = instagram_server.issue_long_lived(next(iter(instagram_server.users)))
        getattr(instagram_server, switch)()
        with pytest.raises(PlatformError) as refused:
            TOKENS.refresh(oauth_client(instagram_server), client, refresh_token=token)
        assert refused.value.auth_failed and not refused.value.transient
        assert_no_secret(refused.value, token)

    def test_a_refresh_instagram_fails_on_its_side_is_tried_again(self, client, instagram_server):
        token = instagram_server.issue_long_lived(next(iter(instagram_server.users)))
        instagram_server.fail_next(1, 500, path="/refresh_access_token")
        with pytest.raises(PlatformError) as failed:
            TOKENS.refresh(oauth_client(instagram_server), client, refresh_token=token)
        assert failed.value.transient and not failed.value.auth_failed

    def test_the_token_endpoints_answers_are_read_in_every_documented_shape(self, connector, instagram_server):
        def token_answer(form: dict):
            response = httpx.post(instagram_server.base_url + "/oauth/token", data=form)
            return TOKENS.token_response(_AuthlibAnswer(response)).json()

        code = self.authorize(connector, instagram_server)
        instagram_server.wrapped_token_answer = True  # {"data": [{...}]}, as documented
        form = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "grant_type": "authorization_code",
                "redirect_uri": "https://app.example/cb", "code": code}
        read = token_answer(form)
        assert read["access_token"] and read["permissions"] and str(read["user_id"]) == next(iter(instagram_server.users))
        # A code used again: {"error_type", "code", "error_message"} becomes an OAuth 2 error.
        assert token_answer(form) == {"error": "invalid_grant",
                                      "error_description": "Matching code was not found or was already used"}


    # Instagram answers the code exchange flat, or wrapped as its docs show ({"data": [{...}]}).
    @pytest.mark.parametrize("wrapped", [False, True])
    def test_the_generic_flow_keeps_instagram_tokens(self, connector, client, instagram_server, wrapped):
        instagram_server.wrapped_token_answer = wrapped
        code = self.authorize(connector, instagram_server)
        tokens = oauth.exchange_code(connector.oauth, oauth_client(instagram_server), client, code=code,
                                     code_verifier=None)
        assert tokens.refresh_token == tokens.access_token and tokens.expires_at is not None
        renewed = oauth.refresh(connector.oauth, oauth_client(instagram_server), client,
                                refresh_token=tokens.refresh_token)
        assert renewed.access_token != tokens.access_token
        assert instagram_server.calls_to("/refresh_access_token")[-1].query["access_token"] == tokens.access_token
        with pytest.raises(PlatformError) as used:  # a code used again is a refused grant, not a malformed answer
            oauth.exchange_code(connector.oauth, oauth_client(instagram_server), client, code=code, code_verifier=None)
        assert used.value.auth_failed


class _AuthlibAnswer:
    """An httpx response as socialpub.connectors.oauth hands one to Authlib."""

    def __init__(self, response: httpx.Response):
        self.status_code, self.headers, self.content = response.status_code, response.headers, response.content

    def json(self):
        return json.loads(self.content)

    def raise_for_status(self):
        raise AssertionError(self.status_code)


def test_the_default_api_url_is_where_the_paths_go():
    client = RecordingClient()
    api_url = OAUTH_ENDPOINTS["instagram"][3]
    with pytest.raises(PlatformError):
        InstagramConnector(client).identities(api_url=api_url, access_token="IGAA-x")
    with pytest.raises(PlatformError):
        TOKENS.refresh(oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, "", "", api_url, ""), client, refresh_token="IGAA-x")
    assert client.sent == [
        ("GET", "https://graph.instagram.com/v25.0/me?fields=user_id,username"),
        ("GET", "https://graph.instagram.com/refresh_access_token?grant_type=ig_refresh_token&access_token=IGAA-x"),
    ]
