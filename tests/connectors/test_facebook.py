"""The Facebook Pages connector against a local fake of the Graph API and Facebook Login."""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from socialpub import clock
from socialpub.connectors import oauth
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.connectors.facebook import FacebookConnector
from tests.support.connectors import (
    assert_no_secret,
    auth_failure,
    comment_error,
    publish_error,
)
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET

CONNECTOR = FacebookConnector  # what the `connector` fixture builds
PAGE = "101000000000001"


def account(server, token=None, page_id=PAGE, **secrets) -> AccountCredentials:
    return AccountCredentials(
        account_id="acc_fb", platform="facebook", handle=server.pages[page_id].name,
        options={"api_url": server.base_url + "/api", "page_id": page_id},
        secrets={"access_token": token or server.page_token(page_id), **secrets},
    )


def oauth_client(server) -> oauth.OAuthClient:
    return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                             server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")


def granted(connector, client, server) -> oauth.TokenSet:
    """Tokens for a code the fake's dialog granted."""
    url = oauth.authorization_url(connector.oauth, oauth_client(server), state="s-1", code_verifier=None)
    code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
    return oauth.exchange_code(connector.oauth, oauth_client(server), client, code=code, code_verifier=None)


class TestPublish:
    def test_posts_the_message_as_the_page_with_its_token(self, connector, facebook_server):
        acct = account(facebook_server)
        published = connector.publish(acct, "Hello, Facebook", idempotency_key="target-1")
        call = facebook_server.calls_to(f"/{PAGE}/feed")[-1]
        assert (call.method, call.body) == ("POST", {"message": "Hello, Facebook"})
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"
        assert "access_token" not in call.query
        page_id, story = published.external_id.split("_")
        assert page_id == PAGE
        assert published == Published(external_id=published.external_id,
                                      url=f"https://www.facebook.com/{PAGE}/posts/{story}")
        assert facebook_server.published_texts() == ["Hello, Facebook"]

    def test_the_first_comment_is_a_comment_of_the_page_under_its_post(self, connector, facebook_server):
        acct = account(facebook_server)
        parent = connector.publish(acct, "The post", idempotency_key="t")
        reply = connector.comment(acct, parent=parent, content="The comment", idempotency_key="c")
        call = facebook_server.calls_to("/comments")[-1]
        assert (call.path, call.body) == (f"/api/{parent.external_id}/comments", {"message": "The comment"})
        assert facebook_server.reply_texts() == ["The comment"]
        assert reply.url == f"{parent.url}?comment_id={reply.external_id.split('_')[1]}"

    def test_a_comment_under_a_post_that_is_gone_is_permanent(self, connector, facebook_server):
        comment_error(connector, account(facebook_server), Published(f"{PAGE}_404"), "platform_rejected",
                      transient=False, says="does not exist")

    def test_the_same_message_twice_in_a_row_is_refused_for_good(self, connector, facebook_server):
        acct = account(facebook_server)
        connector.publish(acct, "Same words", idempotency_key="a")
        publish_error(connector, acct, "platform_rejected", transient=False, says="duplicate", content="Same words")

    def test_facebook_takes_63206_characters(self, connector, facebook_server):
        connector.publish(account(facebook_server), "a" * 63206, idempotency_key="a")
        publish_error(connector, account(facebook_server), "platform_rejected", transient=False, says="63206",
                      content="b" * 63207)
        assert len(facebook_server.published_texts()) == 1

    def test_a_user_token_cannot_post_as_the_page(self, connector, facebook_server):
        user_token, _ = facebook_server.issue(next(iter(facebook_server.users)))
        publish_error(connector, account(facebook_server, token=user_token), "platform_rejected", transient=False,
                      says="permission or page task is missing")

    def test_a_page_token_without_the_posting_permission_is_refused(self, connector, facebook_server):
        token = facebook_server.page_token(PAGE, {"pages_show_list", "pages_read_engagement"})
        publish_error(connector, account(facebook_server, token=token), "platform_rejected", transient=False,
                      says="pages_manage_posts")

    def test_an_account_without_a_numeric_page_id_must_be_connected_again(self, connector, facebook_server):
        acct = account(facebook_server)
        broken = AccountCredentials(acct.account_id, acct.platform, acct.handle,
                                    options={**acct.options, "page_id": "../me"}, secrets=acct.secrets)
        publish_error(connector, broken, "account_invalid", transient=False, auth_failed=True, says="page id")


class TestFailures:
    def test_a_refused_token_is_an_auth_failure_without_any_token_in_it(self, connector, facebook_server):
        acct = account(facebook_server, token="EAAB-not-a-token-of-facebook", user_access_token="EAAB-user-token")
        error = auth_failure(connector, acct, says="code 190")
        assert_no_secret(error, "EAAB-not-a-token-of-facebook", "EAAB-user-token")

    def test_an_expired_token_is_an_auth_failure_though_facebook_answers_400(self, connector, facebook_server):
        acct = account(facebook_server)
        facebook_server.expire_tokens()
        error = auth_failure(connector, acct, says="subcode 463")
        assert facebook_server.calls[-1].path.endswith("/feed")
        assert_no_secret(error, acct.secrets["access_token"])

    def test_a_user_who_removed_the_app_makes_the_page_token_refused(self, connector, facebook_server):
        acct = account(facebook_server)
        facebook_server.revoke_grants()
        auth_failure(connector, acct, says="subcode 458")

    def test_a_throttled_page_waits_the_time_facebook_estimates(self, connector, facebook_server):
        facebook_server.throttle(PAGE, minutes=7)
        error = publish_error(connector, account(facebook_server), "rate_limited", transient=True, says="80001")
        assert error.retry_after == 7 * 60
        assert facebook_server.published_texts() == []

    def test_the_page_usage_header_gives_the_wait_too(self, connector, facebook_server):
        facebook_server.fail_next(1, 400, {"error": {"message": "(#32) Page request limit reached", "code": 32,
                                                     "type": "OAuthException", "fbtrace_id": "x"}},
                                  headers={"X-Page-Usage": json.dumps({"call_count": 100, "total_cputime": 10,
                                                                       "total_time": 10,
                                                                       "estimated_time_to_regain_access": 3})})
        assert publish_error(connector, account(facebook_server), "rate_limited", transient=True).retry_after == 180

    @pytest.mark.parametrize("code", [4, 17, 613])
    def test_app_and_user_rate_limits_are_transient(self, connector, facebook_server, code):
        facebook_server.fail_next(1, 403, {"error": {"message": f"(#{code}) request limit reached", "code": code,
                                                     "type": "OAuthException", "is_transient": True}},
                                  headers={"X-App-Usage": json.dumps({"call_count": 100, "total_time": 40,
                                                                      "total_cputime": 40}),
                                           "Retry-After": "30"})
        error = publish_error(connector, account(facebook_server), "rate_limited", transient=True)
        assert error.retry_after == 30  # X-App-Usage names no wait: Retry-After does

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_server_errors_are_transient(self, connector, facebook_server, status):
        facebook_server.fail_next(1, status)
        publish_error(connector, account(facebook_server), "platform_unavailable", transient=True)

    def test_graph_unknown_errors_are_transient_whatever_their_status(self, connector, facebook_server):
        facebook_server.fail_next(1, 400, {"error": {"message": "An unknown error occurred", "code": 1,
                                                     "type": "OAuthException"}})
        publish_error(connector, account(facebook_server), "platform_unavailable", transient=True, says="code 1")


class TestMetrics:
    def test_post_and_page_metrics(self, connector, facebook_server):
        acct = account(facebook_server)
        published = connector.publish(acct, "Counted", idempotency_key="m")
        connector.comment(acct, parent=published, content="First!", idempotency_key="c")
        reading = connector.fetch_post_metrics(acct, published.external_id)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions) == (12, 1, 3, 240)
        insights = facebook_server.calls_to("/insights")[-1]
        assert insights.query == {"metric": "post_media_view"}
        assert connector.fetch_account_metrics(acct).followers == facebook_server.follower_count() == 4200

    def test_a_post_nobody_shared_counts_no_share(self, connector, facebook_server):
        acct = account(facebook_server)
        published = connector.publish(acct, "Unshared", idempotency_key="m")
        facebook_server.posts[published.external_id].shares = 0
        assert connector.fetch_post_metrics(acct, published.external_id).shares == 0

    def test_without_insights_the_counts_still_stand(self, connector, facebook_server):
        facebook_server.pages[PAGE].insights = False
        acct = account(facebook_server)
        published = connector.publish(acct, "Small page", idempotency_key="m")
        reading = connector.fetch_post_metrics(acct, published.external_id)
        assert (reading.likes, reading.impressions) == (12, None)
        no_insights = account(facebook_server, token=facebook_server.page_token(
            PAGE, facebook_server.required_scopes - {"read_insights"}))
        assert connector.fetch_post_metrics(no_insights, published.external_id).impressions is None

    def test_metrics_of_a_refused_token_are_an_auth_failure(self, connector, facebook_server):
        acct = account(facebook_server)
        published = connector.publish(acct, "Counted", idempotency_key="m")
        facebook_server.expire_tokens()
        for read in (lambda: connector.fetch_post_metrics(acct, published.external_id),
                     lambda: connector.fetch_account_metrics(acct)):
            with pytest.raises(PlatformError) as refused:
                read()
            assert refused.value.auth_failed


class TestOAuth:
    def test_the_flow_asks_for_the_page_permissions_and_lists_the_pages(self, connector, client, facebook_server):
        url = httpx.URL(oauth.authorization_url(connector.oauth, oauth_client(facebook_server), state="s-1",
                                                code_verifier=None))
        assert url.params["scope"].split(",") == [
            "pages_show_list", "pages_manage_posts", "pages_read_engagement", "pages_manage_engagement",
            "read_insights"]
        assert "code_challenge" not in url.params and url.params["client_id"] == CLIENT_ID
        tokens = granted(connector, client, facebook_server)
        # Facebook Login: the client's id and secret as form fields; no refresh token; the
        # short-lived user token exchanged at once for a long-lived one.
        code_exchange, long_lived = facebook_server.calls_to("/oauth/token")[-2:]
        form = {key: values[-1] for key, values in parse_qs(code_exchange.raw.decode()).items()}
        assert (code_exchange.method, form["client_id"], form["client_secret"]) == ("POST", CLIENT_ID, CLIENT_SECRET)
        assert (long_lived.method, long_lived.query["grant_type"]) == ("GET", "fb_exchange_token")
        assert tokens.refresh_token is None and tokens.expires_at is not None
        first, second = connector.identities(api_url=facebook_server.base_url + "/api", access_token=tokens.access_token)
        assert [(i.external_id, i.handle) for i in (first, second)] == [
            (PAGE, "Acme Coffee"), ("102000000000002", "Acme Roastery")]
        assert first.options == {"page_id": PAGE}
        assert first.secrets["user_access_token"] == tokens.access_token
        assert first.secrets["access_token"] not in (tokens.access_token, second.secrets["access_token"])
        # The page token posts as the page.
        connector.publish(account(facebook_server, token=first.secrets["access_token"]), "Hi", idempotency_key="k")
        assert facebook_server.published_texts() == ["Hi"]

    def test_only_pages_the_user_can_post_to_are_offered(self, connector, client, facebook_server):
        facebook_server.add_page("103000000000003", "Acme Analytics", tasks=("ANALYZE",))
        tokens = granted(connector, client, facebook_server)
        handles = [i.handle for i in connector.identities(api_url=facebook_server.base_url + "/api",
                                                          access_token=tokens.access_token)]
        assert handles == ["Acme Coffee", "Acme Roastery"]

    def test_a_user_without_a_page_to_post_to_is_told_so(self, connector, client, facebook_server):
        for page in facebook_server.pages.values():
            page.tasks = ("ANALYZE",)
        tokens = granted(connector, client, facebook_server)
        with pytest.raises(PlatformError) as refused:
            connector.identities(api_url=facebook_server.base_url + "/api", access_token=tokens.access_token)
        assert "CREATE_CONTENT" in refused.value.message and tokens.access_token not in refused.value.message

    def test_many_pages_are_read_by_cursor_with_the_token_kept_out_of_urls(self, connector, client, facebook_server):
        for n in range(120):
            facebook_server.add_page(str(200000000000000 + n), f"Branch {n}")
        tokens = granted(connector, client, facebook_server)
        identities = connector.identities(api_url=facebook_server.base_url + "/api", access_token=tokens.access_token)
        assert len(identities) == 122
        calls = facebook_server.calls_to("/me/accounts")
        assert len(calls) == 2 and all("access_token" not in call.query for call in calls)

    def test_a_code_is_good_once(self, connector, client, facebook_server):
        url = oauth.authorization_url(connector.oauth, oauth_client(facebook_server), state="s", code_verifier=None)
        code = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"]).params["code"]
        oauth.exchange_code(connector.oauth, oauth_client(facebook_server), client, code=code, code_verifier=None)
        answer = httpx.post(facebook_server.base_url + "/oauth/token", data={
            "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "code": code, "redirect_uri": "https://app.example/cb"})
        assert answer.status_code == 400 and answer.json()["error"]["error_subcode"] == 36009

    def test_a_refused_code_is_a_platform_error(self, connector, client, facebook_server):
        # Graph's error shape ({"error": {...}}), not RFC 6749's: a refused grant all the same.
        with pytest.raises(PlatformError) as refused:
            oauth.exchange_code(connector.oauth, oauth_client(facebook_server), client, code="code-unknown",
                                code_verifier=None)
        assert refused.value.auth_failed and not refused.value.transient

    def test_the_code_exchange_gives_a_long_lived_token_whose_pages_keep_their_tokens(
        self, connector, client, facebook_server,
    ):
        tokens = granted(connector, client, facebook_server)
        assert tokens.refresh_token is None
        assert (tokens.expires_at - clock.now()).days >= 58
        [first, _] = connector.identities(api_url=facebook_server.base_url + "/api", access_token=tokens.access_token)
        assert "-long-" in first.secrets["access_token"]

    def test_a_long_lived_token_refused_says_so_without_secrets(self, connector, client, facebook_server):
        wrong = oauth.OAuthClient(CLIENT_ID, "not-the-app-secret", "", facebook_server.base_url + "/oauth/token",
                                  "", "https://app.example/cb")
        with pytest.raises(PlatformError) as refused:
            connector.long_lived_token(wrong, "EAAB-short-lived")
        assert not refused.value.transient
        assert_no_secret(refused.value, "not-the-app-secret", "EAAB-short-lived")

    def test_there_is_no_refresh_but_a_removed_app_refuses_the_page(self, connector, client, facebook_server):
        tokens = granted(connector, client, facebook_server)
        [first, _] = connector.identities(api_url=facebook_server.base_url + "/api", access_token=tokens.access_token)
        assert "refresh_token" not in tokens.secrets()
        facebook_server.revoke_grants()
        auth_failure(connector, account(facebook_server, token=first.secrets["access_token"]))
        # What the token endpoint says to a refresh grant (the service never sends one:
        # it stores no refresh token for Facebook).
        answer = httpx.post(facebook_server.base_url + "/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": "r", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
        assert answer.status_code == 400 and "Invalid grant_type" in answer.json()["error"]["message"]
        assert urlsplit(facebook_server.base_url).hostname == "127.0.0.1"
