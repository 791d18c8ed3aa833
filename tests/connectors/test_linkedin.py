"""The LinkedIn connector against a local fake of LinkedIn's Posts, comments, social
actions and member APIs and its OAuth 2 server."""
from __future__ import annotations

import dataclasses
import datetime as dt
from urllib.parse import quote

import httpx
import pytest

from socialpub import clock
from socialpub.connectors import linkedin, oauth
from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.linkedin import LinkedInConnector, little_text
from tests.support.connectors import (
    assert_no_secret,
    auth_failure,
    comment_error,
    publish_error,
)
from tests.support.fakes.linkedin import FakeLinkedIn, render_little
from tests.support.fakes.oauth import CLIENT_ID, CLIENT_SECRET

CONNECTOR = LinkedInConnector  # what the `connector` fixture builds
METRICS_SCOPES = {"openid", "profile", "w_member_social", "r_member_social", "r_member_profileAnalytics"}


def account(server, token=None, *, scopes=None, author=None) -> AccountCredentials:
    member = next(iter(server.users))
    access = token or server.issue(member, scopes)[0]
    return AccountCredentials(
        account_id="acc_li", platform="linkedin", handle="Ada Lovelace",
        options={"api_url": server.base_url + "/api", "author_urn": author or f"urn:li:person:{member}"},
        secrets={"access_token": access},
    )


class TestPublish:
    def test_posts_the_text_as_the_member_with_the_version_headers(self, connector, linkedin_server):
        acct = account(linkedin_server)
        published = connector.publish(acct, "Hello, LinkedIn", idempotency_key="target-1")
        call = linkedin_server.calls_to("/rest/posts")[-1]
        assert call.method == "POST" and call.body == {
            "author": "urn:li:person:782bbtaQ", "commentary": "Hello, LinkedIn", "visibility": "PUBLIC",
            "distribution": {"feedDistribution": "MAIN_FEED", "targetEntities": [], "thirdPartyDistributionChannels": []},
            "lifecycleState": "PUBLISHED", "isReshareDisabledByAuthor": False,
        }
        assert call.headers["authorization"] == f"Bearer {acct.secrets['access_token']}"
        assert call.headers["linkedin-version"] == linkedin.API_VERSION
        assert call.headers["x-restli-protocol-version"] == "2.0.0"
        urn = published.external_id
        assert urn.startswith("urn:li:share:")
        assert published == Published(urn, f"https://www.linkedin.com/feed/update/{urn}/", {"urn": urn})
        assert linkedin_server.published_texts() == ["Hello, LinkedIn"]

    def test_reserved_characters_are_escaped_so_the_whole_text_goes_out(self, connector, linkedin_server):
        # Unescaped, LinkedIn drops everything from the first reserved character on.
        text = "Launch (beta) for @team_leads: 50% off *today* ~ <b> [x] {y} | C# a\\b, see #launch2027"
        assert render_little(text) == "Launch "
        connector.publish(account(linkedin_server), text, idempotency_key="t")
        sent = linkedin_server.calls_to("/rest/posts")[-1].body["commentary"]
        assert sent.startswith("Launch \\(beta\\) for \\@team\\_leads") and sent.endswith("a\\\\b, see #launch2027")
        assert "C\\#" in sent
        assert linkedin_server.published_texts() == [text]

    def test_little_text_leaves_hashtags_to_link(self):
        assert little_text("#ai and #ml_ops, not C# or x#1 or # alone") == (
            "#ai and #ml\\_ops, not C\\# or x\\#1 or \\# alone")
        assert render_little(little_text("#ai and #ml_ops, not C# or x#1 or # alone")) == (
            "#ai and #ml_ops, not C# or x#1 or # alone")

    def test_the_first_comment_goes_under_the_post(self, connector, linkedin_server):
        acct = account(linkedin_server)
        parent = connector.publish(acct, "The post", idempotency_key="t")
        comment = connector.comment(acct, parent=parent, content="More (in the thread) #here", idempotency_key="c")
        call = linkedin_server.calls_to("/comments")[-1]
        assert call.path == f"/api/rest/socialActions/{quote(parent.external_id, safe='')}/comments"
        assert call.body == {"actor": "urn:li:person:782bbtaQ", "object": parent.external_id,
                             "message": {"text": "More (in the thread) #here"}}
        assert comment.external_id.startswith(f"urn:li:comment:({parent.external_id},")
        assert linkedin_server.reply_texts() == ["More (in the thread) #here"]

    def test_a_comment_under_a_post_that_is_gone_is_permanent(self, connector, linkedin_server):
        comment_error(connector, account(linkedin_server), Published("urn:li:share:404"), "platform_rejected",
                      transient=False, says="404")

    def test_a_publish_retried_after_a_lost_answer_finds_its_post(self, connector, linkedin_server):
        # LinkedIn takes no idempotency key; it refuses the duplicate, naming the post.
        acct = account(linkedin_server)
        first = connector.publish(acct, "Said once", idempotency_key="k")
        again = connector.publish(acct, "Said once", idempotency_key="k")
        assert again == first and linkedin_server.published_texts() == ["Said once"]

    def test_linkedin_counts_3000_characters_as_shown(self, connector, linkedin_server):
        connector.publish(account(linkedin_server), "(" * 3000, idempotency_key="a")
        publish_error(connector, account(linkedin_server), "platform_rejected", transient=False, says="3000",
                      content="x" * 3001)

    def test_posting_as_someone_else_is_refused(self, connector, linkedin_server):
        publish_error(connector, account(linkedin_server, author="urn:li:person:someoneElse"), "platform_rejected",
                      transient=False, says="ACCESS_DENIED")

    def test_a_token_without_w_member_social_is_refused_for_good(self, connector, linkedin_server):
        acct = account(linkedin_server, scopes={"openid", "profile"})
        publish_error(connector, acct, "platform_rejected", transient=False, says="lacks the permission")

    def test_an_account_without_an_author_urn_must_be_connected_again(self, connector, linkedin_server):
        acct = account(linkedin_server, author="someone")
        publish_error(connector, acct, "account_invalid", transient=False, auth_failed=True, says="urn:li:person")
        assert linkedin_server.calls_to("/rest/") == []


class TestFailures:
    def test_an_unknown_token_is_an_auth_failure_without_the_token_in_it(self, connector, linkedin_server):
        error = auth_failure(connector, account(linkedin_server, token="not-a-token-of-linkedin"),
                             says="INVALID_ACCESS_TOKEN")
        assert_no_secret(error, "not-a-token-of-linkedin")

    def test_an_expired_token_is_an_auth_failure(self, connector, linkedin_server):
        acct = account(linkedin_server)
        linkedin_server.expire_tokens()
        assert_no_secret(auth_failure(connector, acct, says="EXPIRED_ACCESS_TOKEN"), acct.secrets["access_token"])

    def test_a_revoked_app_is_an_auth_failure(self, connector, linkedin_server):
        acct = account(linkedin_server)
        linkedin_server.revoke_grants()
        auth_failure(connector, acct, says="revoked")

    def test_a_daily_limit_waits_for_midnight_utc(self, connector, linkedin_server):
        linkedin_server.posts_per_day = 1
        acct = account(linkedin_server)
        connector.publish(acct, "One", idempotency_key="1")
        with clock.installed(clock.FakeClock(dt.datetime(2027, 5, 3, 23, 0, tzinfo=dt.UTC))):
            error = publish_error(connector, acct, "rate_limited", transient=True, says="MEMBER DAY", content="Two")
        assert error.retry_after == 3600

    def test_a_retry_after_is_honoured_when_linkedin_sends_one(self, connector, linkedin_server):
        linkedin_server.fail_next(1, 429, headers={"Retry-After": "90"})
        error = publish_error(connector, account(linkedin_server), "rate_limited", transient=True)
        assert error.retry_after == 90

    @pytest.mark.parametrize("status", [500, 502, 503, 504])
    def test_server_errors_are_transient(self, connector, linkedin_server, status):
        linkedin_server.fail_next(1, status)
        publish_error(connector, account(linkedin_server), "platform_unavailable", transient=True)

    def test_a_version_linkedin_no_longer_serves_is_permanent(self, connector, linkedin_server, monkeypatch):
        monkeypatch.setattr(linkedin, "API_VERSION", "202401")
        publish_error(connector, account(linkedin_server), "platform_rejected", transient=False, says="202401")


class TestMetrics:
    def test_post_and_account_metrics_with_the_permissions_for_them(self, connector, linkedin_server):
        acct = account(linkedin_server, scopes=METRICS_SCOPES)
        published = connector.publish(acct, "Counted", idempotency_key="m")
        connector.comment(acct, parent=published, content="First", idempotency_key="c")
        reading = connector.fetch_post_metrics(acct, published.external_id)
        assert (reading.likes, reading.comments, reading.shares, reading.impressions) == (12, 4, 0, None)
        call = linkedin_server.calls_to("/rest/socialActions/")[-1]
        assert call.method == "GET" and call.headers["linkedin-version"] == linkedin.API_VERSION
        assert connector.fetch_account_metrics(acct).followers == linkedin_server.follower_count() == 1500
        assert linkedin_server.calls_to("/rest/memberFollowersCount")[-1].query == {"q": "me"}

    def test_without_those_permissions_linkedin_reports_none(self, connector, linkedin_server):
        acct = account(linkedin_server)
        published = connector.publish(acct, "Uncounted", idempotency_key="m")
        assert connector.fetch_post_metrics(acct, published.external_id) is None
        assert connector.fetch_account_metrics(acct) is None

    def test_a_post_that_is_gone_is_refused(self, connector, linkedin_server):
        from socialpub.connectors.base import PlatformError

        with pytest.raises(PlatformError) as refused:
            connector.fetch_post_metrics(account(linkedin_server, scopes=METRICS_SCOPES), "urn:li:share:1")
        assert (refused.value.code, refused.value.transient) == ("platform_rejected", False)


class TestOAuth:
    def client(self, server) -> oauth.OAuthClient:
        return oauth.OAuthClient(CLIENT_ID, CLIENT_SECRET, server.base_url + "/oauth/authorize",
                                 server.base_url + "/oauth/token", server.base_url + "/api", "https://app.example/cb")

    def test_the_flow_asks_for_the_scopes_without_pkce_and_reads_the_member(self, connector, client, linkedin_server):
        url = httpx.URL(oauth.authorization_url(connector.oauth, self.client(linkedin_server), state="s-1",
                                                code_verifier=oauth.new_verifier()))
        assert url.params["scope"] == "openid profile w_member_social" and "code_challenge" not in url.params
        # Every scope asked for is one a standard app gets: else LinkedIn refuses the authorization.
        assert set(connector.oauth.scopes) <= FakeLinkedIn.app_scopes
        code = httpx.URL(httpx.get(str(url), follow_redirects=False).headers["location"]).params["code"]
        tokens = oauth.exchange_code(connector.oauth, self.client(linkedin_server), client, code=code, code_verifier=None)
        exchange = linkedin_server.calls_to("/oauth/token")[-1]
        assert "authorization" not in exchange.headers and b"client_secret=" in exchange.raw
        assert tokens.access_token and tokens.refresh_token and tokens.scope == "openid,profile,w_member_social"
        assert (tokens.expires_at - clock.now()).days in (59, 60)
        [identity] = connector.identities(api_url=linkedin_server.base_url + "/api", access_token=tokens.access_token)
        assert (identity.external_id, identity.handle, identity.options) == (
            "782bbtaQ", "Ada Lovelace", {"author_urn": "urn:li:person:782bbtaQ"})
        with pytest.raises(Exception) as again:
            oauth.exchange_code(connector.oauth, self.client(linkedin_server), client, code=code, code_verifier=None)
        assert getattr(again.value, "auth_failed", False)

    def test_a_scope_the_app_is_not_approved_for_is_refused(self, linkedin_server):
        spec = oauth.OAuthSpec(platform="linkedin", label="LinkedIn", scopes=("openid", "r_member_social"), pkce=False)
        url = oauth.authorization_url(spec, self.client(linkedin_server), state="s-2", code_verifier=None)
        redirect = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"])
        assert redirect.params["error"] == "unauthorized_scope_error" and "code" not in redirect.params

    def test_an_app_approved_for_the_metrics_scopes_asks_for_them_and_reads_metrics(self, connector, client, linkedin_server):
        # SOCIALPUB_LINKEDIN_EXTRA_SCOPES names what LinkedIn approved the app for.
        linkedin_server.app_scopes = FakeLinkedIn.app_scopes | {linkedin.POST_METRICS_SCOPE, linkedin.FOLLOWERS_SCOPE}
        registered = dataclasses.replace(self.client(linkedin_server),
                                         extra_scopes=(linkedin.POST_METRICS_SCOPE, linkedin.FOLLOWERS_SCOPE, "openid"))
        url = httpx.URL(oauth.authorization_url(connector.oauth, registered, state="s-3", code_verifier=None))
        assert url.params["scope"] == "openid profile w_member_social r_member_social r_member_profileAnalytics"
        code = httpx.URL(httpx.get(str(url), follow_redirects=False).headers["location"]).params["code"]
        tokens = oauth.exchange_code(connector.oauth, registered, client, code=code, code_verifier=None)
        assert set(tokens.scope.split(",")) == METRICS_SCOPES
        acct = account(linkedin_server, tokens.access_token)
        published = connector.publish(acct, "Counted after the authorization", idempotency_key="m")
        assert connector.fetch_post_metrics(acct, published.external_id).likes == 12
        assert connector.fetch_account_metrics(acct).followers == 1500

    def test_the_metrics_scopes_asked_of_an_app_not_approved_for_them_are_refused(self, connector, linkedin_server):
        registered = dataclasses.replace(self.client(linkedin_server), extra_scopes=(linkedin.POST_METRICS_SCOPE,))
        url = oauth.authorization_url(connector.oauth, registered, state="s-4", code_verifier=None)
        redirect = httpx.URL(httpx.get(url, follow_redirects=False).headers["location"])
        assert redirect.params["error"] == "unauthorized_scope_error" and "r_member_social" in redirect.params["error_description"]

    def test_a_refresh_answers_the_same_refresh_token(self, connector, client, linkedin_server):
        _, refresh = linkedin_server.issue(next(iter(linkedin_server.users)))
        tokens = oauth.refresh(connector.oauth, self.client(linkedin_server), client, refresh_token=refresh)
        assert tokens.refresh_token == refresh and tokens.access_token
        assert linkedin_server.calls_to("/oauth/token")[-1].raw.count(b"client_secret=") == 1

    def test_a_revoked_grant_is_an_auth_failure(self, connector, client, linkedin_server):
        _, refresh = linkedin_server.issue(next(iter(linkedin_server.users)))
        linkedin_server.revoke_grants()
        with pytest.raises(Exception) as refused:
            oauth.refresh(connector.oauth, self.client(linkedin_server), client, refresh_token=refresh)
        assert refused.value.auth_failed and refresh not in refused.value.message

    def test_identities_need_openid_and_profile(self, connector, linkedin_server):
        from socialpub.connectors.base import PlatformError

        token, _ = linkedin_server.issue(next(iter(linkedin_server.users)), {"w_member_social"})
        with pytest.raises(PlatformError) as refused:
            connector.identities(api_url=linkedin_server.base_url + "/api", access_token=token)
        assert refused.value.code == "platform_rejected" and token not in refused.value.message
