"""The Pinterest connector against a local fake of Pinterest's OAuth 2 server and API v5."""
from __future__ import annotations

import datetime as dt

import httpx
import pytest

from socialpub import clock
from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.pinterest import PIN_METRICS, PinterestConnector, reset_seconds
from tests.support.connectors import assert_no_secret, comment_error, platform_error, publish_error
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET, FakeUser
from tests.support.fakes.pinterest import FakePinterest

CONNECTOR = PinterestConnector  # what the `connector` fixture builds


def account(server, token=None) -> AccountCredentials:
    user_id = next(iter(server.users))
    access = token or server.issue(user_id)[0]
    return AccountCredentials(
        account_id="acc_pin", platform="pinterest", handle="@acme",
        options={"api_url": server.base_url + "/api", "user_id": user_id}, secrets={"access_token": access},
    )


def followers_error(connector, acct, code, **kwargs):
    return platform_error(lambda: connector.fetch_account_metrics(acct), code, **kwargs)


def pin_error(connector, acct, pin_id, code, **kwargs):
    return platform_error(lambda: connector.fetch_post_metrics(acct, pin_id), code, **kwargs)


class TestNoTextPosts:
    def test_publishing_is_refused_for_good_without_calling_pinterest(self, connector, pinterest_server):
        publish_error(connector, account(pinterest_server), "platform_rejected", transient=False,
                      says="takes no text-only post")
        comment_error(connector, account(pinterest_server), Published("1"), "platform_rejected", transient=False,
                      says="takes no text-only post")
        assert pinterest_server.calls_to("/api") == []
        assert (connector.publishes_text, connector.supports_comments) == (False, False)
        assert connector.reports_metrics is True


class TestMetrics:
    def test_followers_are_the_accounts_follower_count(self, connector, pinterest_server):
        acct = account(pinterest_server)
        assert connector.fetch_account_metrics(acct).followers == pinterest_server.follower_count() == 842
        call = pinterest_server.calls_to("/api/user_account")[-1]
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"

    def test_an_account_without_a_follower_count_reports_none(self, connector):
        fake = FakePinterest(FakeUser("1", "quiet", {"followers": None})).start()
        try:
            assert connector.fetch_account_metrics(account(fake)) is None
        finally:
            fake.stop()

    def test_a_pins_counts_since_it_went_out(self, connector, pinterest_server):
        pin = pinterest_server.add_pin(days_ago=3, impressions=400, saves=25, pin_clicks=31, outbound_clicks=9,
                                       comments=4, reactions=19)
        published_at = clock.now() - dt.timedelta(days=5)
        reading = connector.fetch_post_metrics(account(pinterest_server), pin, published_at=published_at)
        assert (reading.likes, reading.comments, reading.shares) == (19, 4, 25)
        assert (reading.impressions, reading.clicks, reading.reach) == (400, 40, None)
        query = pinterest_server.calls_to("/analytics")[-1].query
        today = clock.now().astimezone(dt.timezone.utc).date()
        assert query == {"start_date": (today - dt.timedelta(days=5)).isoformat(), "end_date": today.isoformat(),
                         "metric_types": ",".join(PIN_METRICS)}

    def test_an_old_pin_is_read_over_the_90_days_pinterest_keeps(self, connector, pinterest_server):
        pin = pinterest_server.add_pin(days_ago=10)
        connector.fetch_post_metrics(account(pinterest_server), pin, published_at=clock.now() - dt.timedelta(days=400))
        query = pinterest_server.calls_to("/analytics")[-1].query
        today = clock.now().astimezone(dt.timezone.utc).date()
        assert query["start_date"] == (today - dt.timedelta(days=89)).isoformat()

    def test_an_unknown_pin_and_another_users_pin_are_refused_for_good(self, connector, pinterest_server):
        pin_error(connector, account(pinterest_server), "1234", "platform_rejected", transient=False,
                  says="Pin not found")
        other = pinterest_server.add_pin(owner="someone-else")
        pin_error(connector, account(pinterest_server), other, "platform_rejected", transient=False,
                  says="Not authorized")


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, pinterest_server):
        error = followers_error(connector, account(pinterest_server, token="pina_not-a-pinterest-token"),
                                "platform_auth_failed", transient=False, auth_failed=True, says="Authentication failed")
        assert_no_secret(error, "pina_not-a-pinterest-token")

    def test_an_expired_token_is_an_auth_failure(self, connector, pinterest_server):
        acct = account(pinterest_server)
        pinterest_server.expire_tokens()
        followers_error(connector, acct, "platform_auth_failed", transient=False, auth_failed=True)

    def test_a_token_without_a_scope_is_refused_for_good_not_an_auth_failure(self, connector, pinterest_server):
        token, _ = pinterest_server.issue(next(iter(pinterest_server.users)), {"user_accounts:read"})
        pin = pinterest_server.add_pin()
        pin_error(connector, account(pinterest_server, token), pin, "platform_rejected", transient=False,
                  says="connect the account again")

    def test_the_analytics_rate_limit_waits_for_its_reset(self, connector, pinterest_server):
        pinterest_server.analytics_per_minute = 2
        pin, acct = pinterest_server.add_pin(), account(pinterest_server)
        connector.fetch_post_metrics(acct, pin)
        connector.fetch_post_metrics(acct, pin)
        error = pin_error(connector, acct, pin, "rate_limited", transient=True, says="exceeded a rate limit")
        assert 1 <= error.retry_after <= 60

    def test_retry_after_comes_first(self, connector, pinterest_server):
        pinterest_server.fail_next(1, 429, headers={"Retry-After": "42", "x-ratelimit-reset": "7"})
        assert followers_error(connector, account(pinterest_server), "rate_limited", transient=True).retry_after == 42

    def test_a_spam_block_is_not_waited_for(self, connector, pinterest_server):
        pinterest_server.fail_next(1, 429, {"code": 8, "message": "Request blocked: the action looks like spam."})
        followers_error(connector, account(pinterest_server), "platform_rejected", transient=False, says="spam")

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, pinterest_server, status):
        pinterest_server.fail_next(1, status)
        followers_error(connector, account(pinterest_server), "platform_unavailable", transient=True)

    def test_reset_seconds(self):
        assert reset_seconds("30") == 30
        assert reset_seconds(None) is None and reset_seconds("soon") is None


class TestOAuth:
    def client(self, server) -> oauth.OAuthClient:
        return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                                 server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")

    def test_the_flow_asks_comma_separated_scopes_and_reads_the_account(self, connector, client, pinterest_server):
        url = oauth.authorization_url(connector.oauth, self.client(pinterest_server), state="s-1",
                                      code_verifier=oauth.new_verifier())
        params = httpx.URL(url).params
        assert params["scope"] == "user_accounts:read,pins:read,boards:read"
        assert params["response_type"] == "code" and "code_challenge" not in params
        code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
        tokens = oauth.exchange_code(connector.oauth, self.client(pinterest_server), client, code=code,
                                     code_verifier=None)
        assert tokens.access_token and tokens.refresh_token
        assert 29 <= (tokens.expires_at - clock.now()).days <= 30
        assert pinterest_server.calls_to("/oauth/token")[-1].headers["authorization"].startswith("Basic ")
        [identity] = connector.identities(api_url=pinterest_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.external_id, identity.handle) == ("549755885175", pinterest_server.expected_handle)
        with pytest.raises(Exception) as again:
            oauth.exchange_code(connector.oauth, self.client(pinterest_server), client, code=code, code_verifier=None)
        assert getattr(again.value, "auth_failed", False)

    def test_a_refresh_answers_a_new_refresh_token_and_the_old_one_is_spent(self, connector, client, pinterest_server):
        _, refresh = pinterest_server.issue(next(iter(pinterest_server.users)))
        tokens = oauth.refresh(connector.oauth, self.client(pinterest_server), client, refresh_token=refresh)
        assert tokens.refresh_token and tokens.refresh_token != refresh
        assert tokens.secrets({"refresh_token": refresh})["refresh_token"] == tokens.refresh_token
        assert tokens.extra["refresh_token_expires_in"] == 60 * 24 * 3600
        assert connector.fetch_account_metrics(account(pinterest_server, tokens.access_token)).followers == 842
        with pytest.raises(Exception) as spent:
            oauth.refresh(connector.oauth, self.client(pinterest_server), client, refresh_token=refresh)
        assert spent.value.auth_failed

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, pinterest_server):
        _, refresh = pinterest_server.issue(next(iter(pinterest_server.users)))
        pinterest_server.revoke_grants()
        with pytest.raises(Exception) as refused:
            oauth.refresh(connector.oauth, self.client(pinterest_server), client, refresh_token=refresh)
        assert refused.value.auth_failed
        assert_no_secret(refused.value, refresh, CLIENT_SECRET)
