"""The YouTube connector against a local fake of Google's OAuth 2 server and the
YouTube Data API v3."""
from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qs

import httpx
import pytest

from socialpub import clock
from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.youtube import YoutubeConnector, seconds_until_quota_reset
from tests.support.connectors import assert_no_secret, comment_error, platform_error, publish_error
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET, FakeUser
from tests.support.fakes.youtube import READONLY, FakeYouTube

CONNECTOR = YoutubeConnector  # what the `connector` fixture builds


def account(server, token=None) -> AccountCredentials:
    channel_id = next(iter(server.users))
    access = token or server.issue(channel_id)[0]
    return AccountCredentials(
        account_id="acc_yt", platform="youtube", handle="@acmechannel",
        options={"api_url": server.base_url + "/api", "channel_id": channel_id}, secrets={"access_token": access},
    )


def followers_error(connector, acct, code, **kwargs):
    return platform_error(lambda: connector.fetch_account_metrics(acct), code, **kwargs)


class TestNoTextPosts:
    def test_publishing_is_refused_for_good_without_calling_youtube(self, connector, youtube_server):
        publish_error(connector, account(youtube_server), "platform_rejected", transient=False,
                      says="takes no text-only post")
        comment_error(connector, account(youtube_server), Published("vid1"), "platform_rejected", transient=False,
                      says="takes no text-only post")
        assert youtube_server.calls_to("/api") == []
        assert (connector.publishes_text, connector.reports_metrics) == (False, True)


class TestMetrics:
    def test_followers_are_the_channels_subscribers(self, connector, youtube_server):
        acct = account(youtube_server)
        assert connector.fetch_account_metrics(acct).followers == youtube_server.follower_count() == 1530
        call = youtube_server.calls_to("/api/channels")[-1]
        assert call.query == {"part": "statistics", "mine": "true"}
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"

    def test_a_hidden_subscriber_count_is_unknown_not_zero(self, connector):
        fake = FakeYouTube(FakeUser("UChidden", "quiet", {"subscribers": 99, "hidden": True})).start()
        try:
            assert connector.fetch_account_metrics(account(fake)) is None
        finally:
            fake.stop()

    def test_a_videos_counts(self, connector, youtube_server):
        video = youtube_server.add_video(views=1200, likes=40, comments=6)
        reading = connector.fetch_post_metrics(account(youtube_server), video)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions) == (40, 6, 0, 1200)
        assert (reading.reach, reading.clicks) == (None, None)
        assert youtube_server.calls_to("/api/videos")[-1].query == {"part": "statistics", "id": video}

    def test_counts_youtube_omits_count_zero(self, connector, youtube_server):
        video = youtube_server.add_video(views=10, hide=("likeCount", "commentCount"))
        reading = connector.fetch_post_metrics(account(youtube_server), video)
        assert (reading.likes, reading.comments, reading.impressions) == (0, 0, 10)

    def test_a_video_that_is_gone_is_refused_for_good(self, connector, youtube_server):
        platform_error(lambda: connector.fetch_post_metrics(account(youtube_server), "nosuchvideo"),
                       "platform_rejected", transient=False, says="not found")


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, youtube_server):
        error = followers_error(connector, account(youtube_server, token="ya29.not-a-google-token"),
                                "platform_auth_failed", transient=False, auth_failed=True, says="authError")
        assert_no_secret(error, "ya29.not-a-google-token")

    def test_an_expired_token_is_an_auth_failure(self, connector, youtube_server):
        acct = account(youtube_server)
        youtube_server.expire_tokens()
        followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True)

    @pytest.mark.parametrize("now, hours", [
        (dt.datetime(2027, 5, 3, 9, 0, tzinfo=dt.timezone.utc), 22),  # 02:00 PDT: midnight is 07:00 UTC
        (dt.datetime(2027, 1, 15, 9, 0, tzinfo=dt.timezone.utc), 23),  # 01:00 PST: midnight is 08:00 UTC
    ])
    def test_the_daily_quota_waits_for_midnight_pacific_time(self, connector, youtube_server, now, hours):
        youtube_server.quota_left = 0
        with clock.installed(clock.FakeClock(now)):
            error = followers_error(connector, account(youtube_server), "rate_limited", transient=True,
                                    says="midnight Pacific Time")
        assert error.retry_after == hours * 3600
        assert seconds_until_quota_reset(now) == hours * 3600

    def test_each_read_spends_quota(self, connector, youtube_server):
        youtube_server.quota_left = 1
        connector.fetch_account_metrics(account(youtube_server))
        followers_error(connector, account(youtube_server), "rate_limited", transient=True)

    def test_a_short_rate_limit_honours_retry_after(self, connector, youtube_server):
        youtube_server.fail_next(1, 403, {"error": {"code": 403, "message": "Rate Limit Exceeded", "errors": [
            {"message": "Rate Limit Exceeded", "domain": "usageLimits", "reason": "rateLimitExceeded"}]}},
            headers={"Retry-After": "30"})
        error = followers_error(connector, account(youtube_server), "rate_limited", transient=True)
        assert error.retry_after == 30

    def test_a_429_is_a_rate_limit(self, connector, youtube_server):
        youtube_server.fail_next(1, 429)
        followers_error(connector, account(youtube_server), "rate_limited", transient=True)

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, youtube_server, status):
        youtube_server.fail_next(1, status)
        followers_error(connector, account(youtube_server), "platform_unavailable", transient=True)

    def test_a_token_without_the_youtube_scope_is_refused_for_good(self, connector, youtube_server):
        token, _ = youtube_server.issue(next(iter(youtube_server.users)), {"openid"})
        followers_error(connector, account(youtube_server, token), "platform_rejected", transient=False,
                        says="connect the account again")

    def test_a_google_account_without_a_channel_cannot_connect(self, connector):
        fake = FakeYouTube(FakeUser("no-channel", "nobody", {"no_channel": True})).start()
        try:
            token, _ = fake.issue("no-channel")
            platform_error(lambda: connector.identities(api_url=fake.base_url + "/api", access_token=token),
                           "platform_rejected", transient=False, says="no YouTube channel")
        finally:
            fake.stop()


class TestOAuth:
    def client(self, server) -> oauth.OAuthClient:
        return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                                 server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")

    def authorize(self, connector, server) -> tuple[str, str]:
        verifier = oauth.new_verifier()
        url = oauth.authorization_url(connector.oauth, self.client(server), state="s-1", code_verifier=verifier)
        redirect = httpx.get(url, follow_redirects=False).headers["location"]
        return httpx.URL(redirect).params["code"], verifier

    def test_the_url_asks_offline_access_with_consent_pkce_and_the_read_scope(self, connector, youtube_server):
        url = oauth.authorization_url(connector.oauth, self.client(youtube_server), state="s-1",
                                      code_verifier=oauth.new_verifier())
        params = httpx.URL(url).params
        assert (params["access_type"], params["prompt"]) == ("offline", "consent")
        assert params["code_challenge_method"] == "S256" and params["code_challenge"]
        assert params["scope"] == READONLY and params["response_type"] == "code"

    def test_the_code_gives_tokens_for_an_hour_and_the_channel(self, connector, client, youtube_server):
        code, verifier = self.authorize(connector, youtube_server)
        tokens = oauth.exchange_code(connector.oauth, self.client(youtube_server), client, code=code,
                                     code_verifier=verifier)
        assert tokens.access_token and tokens.refresh_token
        assert 3590 <= (tokens.expires_at - clock.now()).total_seconds() <= 3599
        # client_secret_post: the client's secret in the form, no Basic header.
        exchange = youtube_server.calls_to("/oauth/token")[-1]
        form = parse_qs(exchange.raw.decode())
        assert form["client_secret"] == [CLIENT_SECRET] and "authorization" not in exchange.headers
        [identity] = connector.identities(api_url=youtube_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.external_id, identity.handle) == ("UC_x5XG1OV2P6uZZ5FSM9Ttw", youtube_server.expected_handle)
        assert identity.options == {"channel_id": "UC_x5XG1OV2P6uZZ5FSM9Ttw"}
        with pytest.raises(Exception) as again:
            oauth.exchange_code(connector.oauth, self.client(youtube_server), client, code=code, code_verifier=verifier)
        assert getattr(again.value, "auth_failed", False)

    def test_consenting_again_still_gives_a_refresh_token(self, connector, client, youtube_server):
        # Google sends a refresh token again only when the consent screen is shown.
        for _ in range(2):
            code, verifier = self.authorize(connector, youtube_server)
            tokens = oauth.exchange_code(connector.oauth, self.client(youtube_server), client, code=code,
                                         code_verifier=verifier)
            assert tokens.refresh_token

    def test_a_refresh_keeps_the_refresh_token_google_does_not_send_again(self, connector, client, youtube_server):
        _, refresh = youtube_server.issue(next(iter(youtube_server.users)))
        tokens = oauth.refresh(connector.oauth, self.client(youtube_server), client, refresh_token=refresh)
        assert tokens.access_token and tokens.refresh_token == refresh
        assert tokens.secrets({"refresh_token": refresh})["refresh_token"] == refresh
        # Not rotated: the same refresh token is good again.
        assert oauth.refresh(connector.oauth, self.client(youtube_server), client, refresh_token=refresh).access_token
        # The refreshed token reads the channel.
        assert connector.fetch_account_metrics(account(youtube_server, tokens.access_token)).followers == 1530

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, youtube_server):
        _, refresh = youtube_server.issue(next(iter(youtube_server.users)))
        youtube_server.revoke_grants()
        with pytest.raises(Exception) as refused:
            oauth.refresh(connector.oauth, self.client(youtube_server), client, refresh_token=refresh)
        assert refused.value.auth_failed
        assert_no_secret(refused.value, refresh, CLIENT_SECRET)


class TestTheFakeLikeGoogle:
    def test_a_refresh_answer_has_no_refresh_token_and_lasts_3599_seconds(self, youtube_server):
        _, refresh = youtube_server.issue(next(iter(youtube_server.users)))
        answer = httpx.post(youtube_server.base_url + "/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": refresh, "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        }).json()
        assert "refresh_token" not in answer and answer["expires_in"] == 3599

    def test_a_second_consent_without_prompt_consent_gets_no_refresh_token(self, youtube_server):
        def exchange(**params) -> dict:
            query = {"client_id": CLIENT_ID, "response_type": "code", "redirect_uri": "https://app.example/cb",
                     "state": "s", "scope": READONLY, **params}
            location = httpx.get(youtube_server.base_url + "/oauth/authorize", params=query).headers["location"]
            return httpx.post(youtube_server.base_url + "/oauth/token", data={
                "grant_type": "authorization_code", "code": httpx.URL(location).params["code"],
                "redirect_uri": "https://app.example/cb", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            }).json()

        assert "refresh_token" not in exchange()  # online access
        assert "refresh_token" not in exchange(access_type="offline")  # consented before, no consent screen
        assert "refresh_token" in exchange(access_type="offline", prompt="consent")
