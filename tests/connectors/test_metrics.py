"""Metrics readings of each connector: Mastodon and Bluesky against their local fakes
(auth checked as the real ones do), the sandbox deterministic, and the platforms that
report nothing saying so."""
import datetime as dt

import pytest

from socialpub import clock
from socialpub.connectors.base import AccountCredentials, AccountMetricsReading, PlatformError, PostMetricsReading
from socialpub.connectors.bluesky import BlueskyConnector
from socialpub.connectors.discord import DiscordConnector
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.registry import CONNECTORS
from socialpub.connectors.sandbox import SandboxConnector
from socialpub.connectors.telegram import TelegramConnector
from tests.support.connectors import assert_no_secret

MASTODON_TOKEN = "mastodon-token-abc123"
HANDLE, PASSWORD = "socialpub.bsky.social", "abcd-efgh-ijkl-mnop"


def mastodon_account(base_url, token=MASTODON_TOKEN):
    return AccountCredentials(account_id="acc_m", platform="mastodon", handle="@socialpub",
                              options={"instance_url": base_url}, secrets={"access_token": token})


def bluesky_account(base_url, password=PASSWORD):
    return AccountCredentials(account_id="acc_b", platform="bluesky", handle=f"@{HANDLE}",
                              options={"service_url": base_url}, secrets={"identifier": HANDLE, "app_password": password})


class TestMastodon:
    def test_reads_a_status_counts_with_the_token(self, client, mastodon_server):
        connector = MastodonConnector(client)
        account = mastodon_account(mastodon_server.base_url)
        status = connector.publish(account, "Counted", idempotency_key="k1")
        mastodon_server.counts[status.external_id] = {"favourites_count": 7, "reblogs_count": 3, "replies_count": 2}

        reading = connector.fetch_post_metrics(account, status.external_id)

        assert reading == PostMetricsReading(likes=7, comments=2, shares=3, impressions=None, reach=None, clicks=None)
        call = mastodon_server.calls[-1]
        assert (call.method, call.path) == ("GET", f"/api/v1/statuses/{status.external_id}")
        assert call.headers["authorization"] == f"Bearer {MASTODON_TOKEN}"

    def test_reads_followers_of_the_token_account(self, client, mastodon_server):
        mastodon_server.followers_count = 1234
        reading = MastodonConnector(client).fetch_account_metrics(mastodon_account(mastodon_server.base_url))
        assert reading == AccountMetricsReading(followers=1234)
        assert mastodon_server.calls[-1].path == "/api/v1/accounts/verify_credentials"

    def test_a_refused_token_is_an_auth_failure_without_the_secret(self, client, mastodon_server):
        with pytest.raises(PlatformError) as caught:
            MastodonConnector(client).fetch_account_metrics(mastodon_account(mastodon_server.base_url, token="wrong-token-9"))
        assert caught.value.auth_failed and not caught.value.transient
        assert_no_secret(caught.value, "wrong-token-9")

    def test_a_deleted_status_is_permanent(self, client, mastodon_server):
        with pytest.raises(PlatformError) as caught:
            MastodonConnector(client).fetch_post_metrics(mastodon_account(mastodon_server.base_url), "999")
        assert not caught.value.transient

    def test_a_rate_limit_carries_the_platform_wait(self, client, mastodon_server):
        mastodon_server.fail_next(1, 429, headers={"Retry-After": "120"})
        with pytest.raises(PlatformError) as caught:
            MastodonConnector(client).fetch_account_metrics(mastodon_account(mastodon_server.base_url))
        assert (caught.value.code, caught.value.transient, caught.value.retry_after) == ("rate_limited", True, 120.0)


class TestBluesky:
    def test_reads_post_counts_through_the_pds(self, client, bluesky_server):
        connector = BlueskyConnector(client)
        account = bluesky_account(bluesky_server.base_url)
        post = connector.publish(account, "Counted", idempotency_key="k1")
        bluesky_server.counts[post.external_id] = {"likeCount": 9, "repostCount": 2, "quoteCount": 1, "replyCount": 4}

        reading = connector.fetch_post_metrics(account, post.external_id)

        assert reading == PostMetricsReading(likes=9, comments=4, shares=3)
        call = bluesky_server.calls[-1]
        assert call.path == "/xrpc/app.bsky.feed.getPosts" and call.query == {"uris": post.external_id}
        assert call.headers["authorization"].startswith("Bearer ")

    def test_many_readings_sign_in_once(self, client, bluesky_server):
        connector = BlueskyConnector(client)
        account = bluesky_account(bluesky_server.base_url)
        uris = [connector.publish(account, f"Post {n}", idempotency_key=f"k{n}").external_id for n in range(3)]
        signed_in = len(bluesky_server.calls_to("createSession"))
        for uri in uris:
            connector.fetch_post_metrics(account, uri)
        bluesky_server.followers_count = 77
        assert connector.fetch_account_metrics(account) == AccountMetricsReading(followers=77)
        assert len(bluesky_server.calls_to("createSession")) == signed_in + 1

    def test_an_expired_session_signs_in_again(self, client, bluesky_server):
        connector = BlueskyConnector(client)
        account = bluesky_account(bluesky_server.base_url)
        connector.fetch_account_metrics(account)
        bluesky_server.expire_sessions()
        bluesky_server.followers_count = 5
        assert connector.fetch_account_metrics(account).followers == 5

    def test_a_post_the_appview_does_not_return_is_permanent(self, client, bluesky_server):
        missing = f"at://{bluesky_server.did}/app.bsky.feed.post/3kaaaaaaaaaaa"
        with pytest.raises(PlatformError) as caught:
            BlueskyConnector(client).fetch_post_metrics(bluesky_account(bluesky_server.base_url), missing)
        assert not caught.value.transient

    def test_a_refused_password_is_an_auth_failure(self, client, bluesky_server):
        with pytest.raises(PlatformError) as caught:
            BlueskyConnector(client).fetch_account_metrics(bluesky_account(bluesky_server.base_url, password="nope-nope"))
        assert caught.value.auth_failed

    def test_a_rate_limit_is_transient_with_its_wait(self, client, bluesky_server):
        reset = int(dt.datetime.now(dt.timezone.utc).timestamp()) + 300
        bluesky_server.fail_next(1, 429, headers={"ratelimit-reset": str(reset)}, path="getProfile")
        with pytest.raises(PlatformError) as caught:
            BlueskyConnector(client).fetch_account_metrics(bluesky_account(bluesky_server.base_url))
        assert caught.value.code == "rate_limited" and 250 < caught.value.retry_after <= 300


class TestSandbox:
    ACCOUNT = AccountCredentials(account_id="5f0c2f9e-1b7d-4c1e-9a51-3f2a9c7d8e10", platform="twitter", handle="@s")

    def test_the_same_post_at_the_same_age_reads_the_same(self):
        published = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)
        with clock.installed(clock.FakeClock(published + dt.timedelta(hours=30))):
            first = SandboxConnector().fetch_post_metrics(self.ACCOUNT, "sbx_abc", published_at=published)
            again = SandboxConnector().fetch_post_metrics(self.ACCOUNT, "sbx_abc", published_at=published)
            other = SandboxConnector().fetch_post_metrics(self.ACCOUNT, "sbx_def", published_at=published)
        assert first == again and first != other

    def test_counts_grow_with_age_and_are_plausible(self):
        published = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)
        fake = clock.FakeClock(published)
        readings = []
        with clock.installed(fake):
            for hours in (0, 1, 6, 24, 24 * 7):
                fake.advance(hours * 3600 - (fake.now() - published).total_seconds())
                readings.append(SandboxConnector().fetch_post_metrics(self.ACCOUNT, "sbx_grow", published_at=published))
        assert readings[0].impressions == 0
        for earlier, later in zip(readings, readings[1:]):
            for name in ("impressions", "reach", "clicks", "likes", "comments", "shares"):
                assert getattr(later, name) >= getattr(earlier, name)
        week = readings[-1]
        assert week.impressions > 0 and week.reach <= week.impressions and week.likes < week.impressions
        assert week.clicks < week.impressions and week.comments <= week.likes

    def test_followers_are_deterministic_and_grow(self):
        day = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
        with clock.installed(clock.FakeClock(day)):
            first = SandboxConnector().fetch_account_metrics(self.ACCOUNT).followers
            assert SandboxConnector().fetch_account_metrics(self.ACCOUNT).followers == first
        with clock.installed(clock.FakeClock(day + dt.timedelta(days=30))):
            assert SandboxConnector().fetch_account_metrics(self.ACCOUNT).followers > first


class TestWhoReports:
    @pytest.mark.parametrize("connector", [DiscordConnector, TelegramConnector])
    def test_platforms_without_metrics_report_none(self, connector, client):
        account = AccountCredentials(account_id="a", platform="discord", handle="h")
        assert connector(client).fetch_post_metrics(account, "1") is None
        assert connector(client).fetch_account_metrics(account) is None

    def test_every_connector_says_whether_it_reports(self):
        # Telegram and Discord report nothing; every OAuth platform reports its counts.
        from socialpub.config import OAUTH_ENDPOINTS

        reporting = {name for name, cls in CONNECTORS.items() if cls.reports_metrics}
        assert reporting == {"sandbox", "mastodon", "bluesky"} | (set(OAUTH_ENDPOINTS) & set(CONNECTORS))
        assert not CONNECTORS["telegram"].reports_metrics and not CONNECTORS["discord"].reports_metrics
