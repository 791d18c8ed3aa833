"""The Threads connector against a local fake of the Threads API and its OAuth 2 server."""
from __future__ import annotations

import json

import httpx
import pytest

from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.connectors.threads import ThreadsConnector
from tests.support.connectors import (
    assert_no_secret,
    auth_failure,
    comment_error,
    platform_error,
    publish_error,
)
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET
from tests.support.fakes.threads import (
    LONG_LIVED,
    POSTS_PER_DAY,
    REPLIES_PER_DAY,
    threads_length,
)

CONNECTOR = ThreadsConnector  # what the `connector` fixture builds
# Threads' flow without the token keeper: what its token endpoint itself answers.
TOKEN_ENDPOINT_ONLY = oauth.OAuthSpec(platform="threads", label="Threads", scopes=ThreadsConnector.oauth.scopes,
                                      pkce=False, token_auth="client_secret_post", scope_separator=",")


def account(server, token=None, scopes=None) -> AccountCredentials:
    user_id = next(iter(server.users))
    access = token or server.issue(user_id, scopes)[0]
    return AccountCredentials(
        account_id="acc_threads", platform="threads", handle="@acme",
        options={"api_url": server.base_url + "/api", "user_id": user_id},
        secrets={"access_token": access, "refresh_token": access},
    )


def ending(server, suffix: str):
    """The calls to paths ending so (calls_to matches fragments: /threads is in /threads_publish)."""
    return [call for call in server.calls if call.path.endswith(suffix)]


def fail_once(monkeypatch, server, handler: str, error: dict):
    """The fake's `handler` (a route) answers this Graph error once."""
    real = getattr(server, handler)
    answers = [(400, {}, {"error": {"type": "OAuthException", **error}})]
    monkeypatch.setattr(server, handler, lambda *args: answers.pop() if answers else real(*args))


def oauth_client(server) -> oauth.OAuthClient:
    return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                             server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")


class TestPublish:
    def test_a_text_container_then_its_publishing(self, connector, threads_server):
        acct = account(threads_server)
        published = connector.publish(acct, "Hello, Threads", idempotency_key="target-1")
        user_id = acct.options["user_id"]
        [create], [publish] = ending(threads_server, f"/{user_id}/threads"), ending(threads_server, "/threads_publish")
        assert (create.method, create.query["media_type"], create.query["text"]) == ("POST", "TEXT", "Hello, Threads")
        assert create.query["access_token"] == acct.secrets["access_token"]
        assert publish.query["creation_id"] in threads_server.containers
        media = threads_server.media[published.external_id]
        assert published.url == media["permalink"] and published.url.startswith("https://www.threads.net/@acme/post/")
        assert threads_server.published_texts() == ["Hello, Threads"]

    def test_the_quota_is_read_before_the_container(self, connector, threads_server):
        connector.publish(account(threads_server), "Counted", idempotency_key="q")
        [limit] = ending(threads_server, "/threads_publishing_limit")
        assert limit.query["fields"] == "quota_usage,config"
        assert threads_server.calls.index(limit) < threads_server.calls.index(ending(threads_server, "/threads")[0])

    def test_the_first_comment_is_a_reply(self, connector, threads_server):
        acct = account(threads_server)
        parent = connector.publish(acct, "The post", idempotency_key="t")
        reply = connector.comment(acct, parent=parent, content="The comment", idempotency_key="c")
        create = ending(threads_server, "/threads")[-1]
        assert (create.query["text"], create.query["reply_to_id"]) == ("The comment", parent.external_id)
        assert ending(threads_server, "/threads_publishing_limit")[-1].query["fields"] == "reply_quota_usage,reply_config"
        assert threads_server.reply_texts() == ["The comment"]
        assert threads_server.media[reply.external_id]["reply_to"] == parent.external_id

    def test_a_reply_to_a_post_that_is_gone_is_permanent(self, connector, threads_server):
        comment_error(connector, account(threads_server), Published("404"), "platform_rejected", transient=False,
                      says="does not exist")

    def test_threads_counts_500_characters_an_emoji_by_its_bytes(self, connector, threads_server):
        assert threads_length("😀") == 4 and threads_length("é") == 1
        connector.publish(account(threads_server), "a" * 500, idempotency_key="a")
        publish_error(connector, account(threads_server), "platform_rejected", transient=False, says="501 characters",
                      content="a" * 501)
        # 125 emoji are 500 bytes: accepted; 126 are refused, though they are 126 characters.
        connector.publish(account(threads_server), "😀" * 125, idempotency_key="b")
        publish_error(connector, account(threads_server), "platform_rejected", transient=False, says="504 characters",
                      content="😀" * 126)

    def test_replies_need_the_manage_replies_permission(self, connector, threads_server):
        acct = account(threads_server, scopes={"threads_basic", "threads_content_publish"})
        parent = connector.publish(acct, "Posts, but may not reply", idempotency_key="p")
        error = comment_error(connector, acct, parent, "platform_rejected", transient=False, says="permission")
        assert "connect it again" in error.message


class TestTheFakeChecksContainers:
    """What Threads refuses at threads_publish, asked of the fake directly."""

    def publish(self, server, token, creation_id):
        user_id = next(iter(server.users))
        return httpx.post(f"{server.base_url}/api/{user_id}/threads_publish",
                          params={"creation_id": creation_id, "access_token": token})

    def test_an_unknown_creation_id_is_refused(self, threads_server):
        answer = self.publish(threads_server, threads_server.issue(next(iter(threads_server.users)))[0], "12345")
        error = answer.json()["error"]
        assert (answer.status_code, error["code"], error["error_subcode"]) == (400, 24, 4279009)

    def test_a_container_is_published_once_and_within_a_day(self, threads_server):
        user_id = next(iter(threads_server.users))
        token = threads_server.issue(user_id)[0]

        def container() -> str:
            return httpx.post(f"{threads_server.base_url}/api/me/threads",
                              data={"media_type": "TEXT", "text": "Once", "access_token": token}).json()["id"]

        first = container()
        assert self.publish(threads_server, token, first).status_code == 200
        again = self.publish(threads_server, token, first)
        assert again.status_code == 400 and "already published" in again.json()["error"]["error_user_msg"]
        late = container()
        threads_server.advance(24 * 3600 + 1)
        assert "expired" in self.publish(threads_server, token, late).json()["error"]["error_user_msg"]

    def test_another_users_container_is_not_found(self, threads_server):
        from tests.support.fakes.oauth import FakeUser

        threads_server.users["999"] = FakeUser("999", "other")
        mine = threads_server.issue(next(iter(threads_server.users)))[0]
        theirs = threads_server.issue("999")[0]
        created = httpx.post(f"{threads_server.base_url}/api/me/threads",
                             params={"media_type": "TEXT", "text": "Theirs", "access_token": theirs}).json()["id"]
        assert self.publish(threads_server, mine, created).json()["error"]["code"] == 24


class TestLimits:
    def test_a_spent_post_quota_waits_without_creating_a_container(self, connector, threads_server):
        acct = account(threads_server)
        threads_server.fill_quota(acct.options["user_id"], POSTS_PER_DAY)
        error = publish_error(connector, acct, "rate_limited", transient=True, says="250 posts")
        assert error.retry_after == 3600
        assert threads_server.containers == {}

    def test_a_spent_reply_quota_waits(self, connector, threads_server):
        acct = account(threads_server)
        parent = connector.publish(acct, "Parent", idempotency_key="p")
        threads_server.fill_quota(acct.options["user_id"], REPLIES_PER_DAY, replies=True)
        comment_error(connector, acct, parent, "rate_limited", transient=True, says="1000 replies")

    def test_threads_own_refusal_at_publishing_is_a_rate_limit(self, connector, threads_server, monkeypatch):
        # The quota read said there was room; threads_publish refuses (another app posted).
        fail_once(monkeypatch, threads_server, "_publish", {"message": "Application request limit reached", "code": 9})
        publish_error(connector, account(threads_server), "rate_limited", transient=True, says="code 9")

    def test_429_waits_for_retry_after(self, connector, threads_server):
        threads_server.fail_next(1, 429, headers={"Retry-After": "120"})
        error = publish_error(connector, account(threads_server), "rate_limited", transient=True)
        assert error.retry_after == 120

    def test_graph_throttling_waits_for_the_time_to_regain_access(self, connector, threads_server):
        usage = json.dumps({"25025320990357192": [{"type": "threads", "call_count": 100,
                                                   "estimated_time_to_regain_access": 5}]})
        threads_server.fail_next(1, 400, {"error": {"message": "User request limit reached", "code": 17,
                                                    "type": "OAuthException", "is_transient": True}},
                                 headers={"X-Business-Use-Case-Usage": usage})
        error = publish_error(connector, account(threads_server), "rate_limited", transient=True)
        assert error.retry_after == 300

    def test_a_container_not_yet_propagated_is_published_again_later(self, connector, threads_server, monkeypatch):
        fail_once(monkeypatch, threads_server, "_publish", {"message": "The requested resource does not exist",
                                                            "code": 24, "error_subcode": 4279009})
        error = publish_error(connector, account(threads_server), "platform_error", transient=True)
        assert error.retry_after == 30

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, threads_server, status):
        threads_server.fail_next(1, status)
        publish_error(connector, account(threads_server), "platform_unavailable", transient=True)


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_the_token_in_it(self, connector, threads_server):
        error = auth_failure(connector, account(threads_server, token="THQVJ-not-a-token-of-threads"))
        assert_no_secret(error, "THQVJ-not-a-token-of-threads")
        assert "code 190" in error.message

    def test_an_expired_token_is_an_auth_failure(self, connector, threads_server):
        acct = account(threads_server)
        threads_server.expire_tokens()
        assert_no_secret(auth_failure(connector, acct, says="Session has expired"), acct.secrets["access_token"])

    def test_a_401_without_a_graph_body_is_an_auth_failure(self, connector, threads_server):
        threads_server.fail_next(1, 401, b"")
        auth_failure(connector, account(threads_server))

    def test_an_account_without_its_user_id_must_be_connected_again(self, connector, threads_server):
        acct = account(threads_server)
        broken = AccountCredentials(account_id="a", platform="threads", handle="@acme",
                                    options={"api_url": acct.options["api_url"]}, secrets=acct.secrets)
        publish_error(connector, broken, "account_invalid", transient=False, auth_failed=True, says="user_id")


class TestMetrics:
    def test_post_and_account_metrics(self, connector, threads_server):
        acct = account(threads_server)
        published = connector.publish(acct, "Counted", idempotency_key="m")
        reading = connector.fetch_post_metrics(acct, published.external_id)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions) == (9, 2, 2, 120)
        insights = ending(threads_server, "/insights")[-1]
        assert insights.query["metric"] == "views,likes,replies,reposts,quotes"
        assert connector.fetch_account_metrics(acct).followers == threads_server.follower_count() == 321
        assert ending(threads_server, "/threads_insights")[-1].query["metric"] == "followers_count"

    def test_insights_need_their_permission(self, connector, threads_server):
        acct = account(threads_server, scopes={"threads_basic", "threads_content_publish"})
        with pytest.raises(PlatformError) as refused:
            connector.fetch_account_metrics(acct)
        assert refused.value.code == "platform_rejected" and "permission" in refused.value.message

    def test_a_post_that_is_gone_has_no_metrics(self, connector, threads_server):
        with pytest.raises(PlatformError) as refused:
            connector.fetch_post_metrics(account(threads_server), "1789")
        assert refused.value.code == "platform_rejected" and not refused.value.transient


class TestOAuth:
    def test_the_flow_asks_for_the_scopes_and_reads_the_user(self, connector, client, threads_server):
        settings = oauth_client(threads_server)
        url = oauth.authorization_url(connector.oauth, settings, state="s-1", code_verifier=oauth.new_verifier())
        query = httpx.URL(url).params
        assert query["scope"] == "threads_basic,threads_content_publish,threads_manage_replies,threads_manage_insights"
        assert "code_challenge" not in query and query["response_type"] == "code"
        redirect = httpx.get(url, follow_redirects=False).headers["location"]
        assert redirect.endswith("#_")  # as Threads redirects
        code = httpx.URL(redirect).params["code"]
        # What Threads' token endpoint answers: a short-lived token and the user's id, no
        # refresh token, no expiry (the connector's token keeper makes it long-lived).
        short = oauth.exchange_code(TOKEN_ENDPOINT_ONLY, settings, client, code=code, code_verifier=None)
        assert short.refresh_token is None and short.expires_at is None
        assert short.extra["user_id"] == int(next(iter(threads_server.users)))
        token_call = threads_server.calls_to("/oauth/token")[-1]
        assert "client_secret=" in token_call.raw.decode() and "authorization" not in token_call.headers
        [identity] = connector.identities(api_url=threads_server.base_url + "/api", access_token=short.access_token)
        assert (identity.handle, identity.external_id) == ("@acme", "25025320990357192")
        assert identity.options == {"user_id": "25025320990357192"}
        # A code is good once. (Threads answers {"error_type", "code", "error_message"}, which
        # the generic flow, reading RFC 6749 errors, reports as an answer without a token.)
        with pytest.raises(PlatformError):
            oauth.exchange_code(TOKEN_ENDPOINT_ONLY, settings, client, code=code, code_verifier=None)

    def test_the_short_lived_token_is_exchanged_for_a_long_lived_one(self, connector, client, threads_server):
        spec, settings = connector.oauth, oauth_client(threads_server)
        url = oauth.authorization_url(spec, settings, state="s-2", code_verifier=None)
        code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
        short = oauth.exchange_code(TOKEN_ENDPOINT_ONLY, settings, client, code=code, code_verifier=None)
        lasting = connector.token_keeper.after_exchange(settings, client, short)
        exchange = ending(threads_server, "/api/access_token")[-1]
        assert exchange.path == "/api/access_token" and exchange.method == "GET"
        assert (exchange.query["grant_type"], exchange.query["client_secret"]) == ("th_exchange_token", CLIENT_SECRET)
        assert lasting.access_token != short.access_token and lasting.refresh_token == lasting.access_token
        assert lasting.expires_at is not None and lasting.extra == short.extra
        secrets = lasting.secrets()
        assert secrets["access_token"] == secrets["refresh_token"] == lasting.access_token
        # The long-lived token publishes.
        connector.publish(account(threads_server, token=lasting.access_token), "Long-lived", idempotency_key="l")

    def test_a_wrong_app_secret_refuses_the_exchange_without_showing_it(self, connector, client, threads_server):
        spec, settings = connector.oauth, oauth_client(threads_server)
        url = oauth.authorization_url(spec, settings, state="s-3", code_verifier=None)
        code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
        short = oauth.exchange_code(TOKEN_ENDPOINT_ONLY, settings, client, code=code, code_verifier=None)
        wrong = oauth.OAuthClient(CLIENT_ID, "a-wrong-app-secret", settings.authorize_url, settings.token_url,
                                  settings.api_url, settings.redirect_uri)
        error = platform_error(lambda: connector.token_keeper.after_exchange(wrong, client, short),
                               "platform_auth_failed", transient=False, auth_failed=True, says="client secret")
        assert_no_secret(error, "a-wrong-app-secret", short.access_token)

    def test_the_api_version_is_not_part_of_the_token_calls(self, connector):
        from tests.support.connectors import RecordingClient

        recording = RecordingClient()
        settings = oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, "https://threads.net/oauth/authorize",
                                     "https://graph.threads.net/oauth/access_token", "https://graph.threads.net/v1.0",
                                     "https://app.example/cb")
        with pytest.raises(PlatformError):
            connector.token_keeper.refresh(settings, recording, refresh_token="THQVJlong")
        assert recording.sent[0][1].startswith("https://graph.threads.net/refresh_access_token?grant_type=th_refresh_token")

    def test_a_long_lived_token_is_renewed_with_itself(self, connector, client, threads_server):
        token = threads_server.issue(next(iter(threads_server.users)))[0]
        renewed = connector.token_keeper.refresh(oauth_client(threads_server), client, refresh_token=token)
        call = threads_server.calls_to("/refresh_access_token")[-1]
        assert (call.query["grant_type"], call.query["access_token"]) == ("th_refresh_token", token)
        assert renewed.access_token != token and renewed.refresh_token == renewed.access_token
        assert renewed.secrets({"user_id": 7, "refresh_token": token})["user_id"] == 7

    def test_a_token_past_its_60_days_cannot_be_renewed(self, connector, client, threads_server):
        token = threads_server.issue(next(iter(threads_server.users)))[0]
        threads_server.advance(LONG_LIVED + 1)
        error = platform_error(
            lambda: connector.token_keeper.refresh(oauth_client(threads_server), client, refresh_token=token),
            "platform_auth_failed", transient=False, auth_failed=True, says="Session has expired")
        assert_no_secret(error, token, CLIENT_SECRET)

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, threads_server):
        token = threads_server.issue(next(iter(threads_server.users)))[0]
        threads_server.revoke_grants()
        error = platform_error(
            lambda: connector.token_keeper.refresh(oauth_client(threads_server), client, refresh_token=token),
            "platform_auth_failed", transient=False, auth_failed=True)
        assert_no_secret(error, token)

    def test_a_renewal_while_threads_is_down_is_tried_again(self, connector, client, threads_server):
        token = threads_server.issue(next(iter(threads_server.users)))[0]
        threads_server.fail_next(1, 503, path="/refresh_access_token")
        platform_error(lambda: connector.token_keeper.refresh(oauth_client(threads_server), client, refresh_token=token),
                       "platform_unavailable", transient=True)

    def test_the_token_endpoint_takes_no_refresh_grant(self, threads_server):
        answer = httpx.post(threads_server.base_url + "/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": "THQVJlong1", "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        })
        assert answer.status_code == 400 and answer.json()["error_type"] == "OAuthException"

    @pytest.mark.skipif(not hasattr(oauth.OAuthSpec, "token_keeper"),
                        reason="socialpub.connectors.oauth does not call a spec's token_keeper yet")
    def test_the_generic_flow_keeps_threads_tokens(self, connector, client, threads_server):
        settings = oauth_client(threads_server)
        url = oauth.authorization_url(connector.oauth, settings, state="s-4", code_verifier=None)
        code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
        tokens = oauth.exchange_code(connector.oauth, settings, client, code=code, code_verifier=None)
        assert tokens.refresh_token == tokens.access_token and tokens.expires_at is not None
        renewed = oauth.refresh(connector.oauth, settings, client, refresh_token=tokens.refresh_token)
        assert renewed.access_token != tokens.access_token
        assert ending(threads_server, "/refresh_access_token")[-1].query["access_token"] == tokens.access_token
