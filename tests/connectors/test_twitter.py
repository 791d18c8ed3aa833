"""The X connector against a local fake of X's API v2 and OAuth 2 server."""
from __future__ import annotations

import time

import pytest

from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.twitter import TwitterConnector
from tests.support.connectors import assert_no_secret, auth_failure, comment_error, publish_error
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET

CONNECTOR = TwitterConnector  # what the `connector` fixture builds


def account(server, token=None) -> AccountCredentials:
    user_id = next(iter(server.users))
    access = token or server.issue(user_id)[0]
    return AccountCredentials(
        account_id="acc_x", platform="twitter", handle="@acme",
        options={"api_url": server.base_url + "/api", "user_id": user_id}, secrets={"access_token": access},
    )


class TestPublish:
    def test_posts_the_text_with_the_users_token(self, connector, x_server):
        acct = account(x_server)
        published = connector.publish(acct, "Hello, X", idempotency_key="target-1")
        call = x_server.calls_to("/2/tweets")[-1]
        assert (call.method, call.body) == ("POST", {"text": "Hello, X"})
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"
        assert published == Published(external_id=published.external_id,
                                      url=f"https://x.com/acme/status/{published.external_id}")
        assert x_server.published_texts() == ["Hello, X"]

    def test_the_first_comment_is_a_reply(self, connector, x_server):
        acct = account(x_server)
        parent = connector.publish(acct, "The post", idempotency_key="t")
        connector.comment(acct, parent=parent, content="The comment", idempotency_key="c")
        assert x_server.calls_to("/2/tweets")[-1].body == {
            "text": "The comment", "reply": {"in_reply_to_tweet_id": parent.external_id},
        }
        assert x_server.reply_texts() == ["The comment"]

    def test_a_reply_to_a_post_that_is_gone_is_permanent(self, connector, x_server):
        comment_error(connector, account(x_server), Published("404"), "platform_rejected", transient=False,
                      says="does not exist", content="hi")

    def test_duplicate_text_is_refused_for_good(self, connector, x_server):
        acct = account(x_server)
        connector.publish(acct, "Same words", idempotency_key="a")
        publish_error(connector, acct, "platform_rejected", transient=False, says="duplicate content",
                      content="Same words")

    def test_x_counts_weighted_characters(self, connector, x_server):
        # 140 CJK characters weigh 280: accepted; one more is refused by X itself.
        connector.publish(account(x_server), "世" * 140, idempotency_key="a")
        publish_error(connector, account(x_server), "platform_rejected", transient=False, says="weighted",
                      content="世" * 141)


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, x_server):
        acct = account(x_server, token="not-a-token-of-x")
        error = auth_failure(connector, acct)
        assert_no_secret(error, "not-a-token-of-x")

    def test_an_expired_token_is_an_auth_failure(self, connector, x_server):
        acct = account(x_server)
        x_server.expire_tokens()
        auth_failure(connector, acct)

    def test_rate_limits_wait_for_the_reset_x_gives(self, connector, x_server):
        reset = int(time.time()) + 90
        x_server.fail_next(1, 429, headers={"x-rate-limit-reset": str(reset)})
        error = publish_error(connector, account(x_server), "rate_limited", transient=True)
        assert 80 <= error.retry_after <= 90

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, x_server, status):
        x_server.fail_next(1, status)
        publish_error(connector, account(x_server), "platform_unavailable", transient=True)


class TestMetrics:
    def test_post_and_account_metrics(self, connector, x_server):
        acct = account(x_server)
        published = connector.publish(acct, "Counted", idempotency_key="m")
        reading = connector.fetch_post_metrics(acct, published.external_id)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions) == (7, 1, 3, 90)
        assert connector.fetch_account_metrics(acct).followers == x_server.follower_count()


class TestOAuth:
    def client(self, x_server) -> oauth.OAuthClient:
        return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, x_server.base_url + "/oauth/authorize",
                                 x_server.base_url + "/oauth/token", x_server.base_url + "/api", "https://app.example/cb")

    def test_the_flow_asks_for_the_scopes_with_pkce_and_reads_the_user(self, connector, client, x_server):
        import httpx

        verifier = oauth.new_verifier()
        url = oauth.authorization_url(connector.oauth, self.client(x_server), state="s-1", code_verifier=verifier)
        assert "code_challenge_method=S256" in url and "offline.access" in url.replace("+", " ").replace("%20", " ")
        redirect = httpx.get(url, follow_redirects=False).headers["location"]
        code = httpx.URL(redirect).params["code"]
        tokens = oauth.exchange_code(connector.oauth, self.client(x_server), client, code=code, code_verifier=verifier)
        assert tokens.access_token and tokens.refresh_token and tokens.expires_at is not None
        [identity] = connector.identities(api_url=x_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.handle, identity.external_id) == ("@acme", "2244994945")
        # A code is good once, and only with its verifier.
        with pytest.raises(Exception) as again:
            oauth.exchange_code(connector.oauth, self.client(x_server), client, code=code, code_verifier=verifier)
        assert getattr(again.value, "auth_failed", False)

    def test_a_refresh_keeps_a_refresh_token_not_sent_again(self, connector, client, x_server):
        # The fake, like X, answers a refresh without a new refresh token.
        _, refresh = x_server.issue(next(iter(x_server.users)))
        tokens = oauth.refresh(connector.oauth, self.client(x_server), client, refresh_token=refresh)
        assert tokens.refresh_token == refresh
        assert tokens.secrets({"refresh_token": "older"})["refresh_token"] == refresh

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, x_server):
        _, refresh = x_server.issue(next(iter(x_server.users)))
        x_server.revoke_grants()
        with pytest.raises(Exception) as refused:
            oauth.refresh(connector.oauth, self.client(x_server), client, refresh_token=refresh)
        assert refused.value.auth_failed and refresh not in refused.value.message
