"""The snapshot job: one snapshot per target and bucket, hourly then daily, followers
daily; rate limits pause an account, one failing account leaves the others alone;
Mastodon and Bluesky read through their local servers, the sandbox deterministic."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from persistence.analytics import FollowerSnapshot, PostSnapshot, TrackedAccount, TrackedPost
from socialpub import clock
from socialpub.analytics import dispatch, jobs, runner
from socialpub.connectors.bluesky import BlueskyConnector
from socialpub.connectors.mastodon import MastodonConnector
from tests.analytics.conftest import NOW, add_account, local_connectors, publish
from tests.support.jobs import HeldQueue
from workers.registry import periodic_jobs

HOUR = dt.timedelta(hours=1)
MASTODON_TOKEN = "mastodon-token-abc123"


def snapshots(session, target) -> list[dt.datetime]:
    session.expire_all()
    return list(session.execute(
        select(PostSnapshot.bucket_start).where(PostSnapshot.target_id == target.id).order_by(PostSnapshot.bucket_start)
    ).scalars())


def tracked_row(session, target) -> TrackedPost:
    session.expire_all()
    return session.execute(select(TrackedPost).where(TrackedPost.target_id == target.id)).scalar_one()


def mastodon_account(session, workspace, server, *, token=MASTODON_TOKEN, handle="@socialpub"):
    return add_account(session, workspace, livemode=True, platform="mastodon", connector="mastodon", handle=handle,
                       options={"instance_url": server.base_url}, secrets={"access_token": token})


def mastodon_status(server, account_token=MASTODON_TOKEN, **counts) -> str:
    from socialpub.connectors.base import AccountCredentials
    from socialpub.outbound import Allowlist, GuardedClient

    credentials = AccountCredentials(account_id="x", platform="mastodon", handle="h",
                                     options={"instance_url": server.base_url}, secrets={"access_token": account_token})
    status = MastodonConnector(GuardedClient(allowlist=Allowlist.parse("127.0.0.1"))).publish(
        credentials, "Measured", idempotency_key=str(len(server.posts)))
    server.counts[status.external_id] = counts
    return status.external_id


class TestBuckets:
    def test_one_snapshot_per_hour_for_48_hours_then_per_day(self, session, workspace, collector):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW)

        collector.run(NOW + dt.timedelta(minutes=10))
        collector.run(NOW + dt.timedelta(minutes=20))  # same hour: not due, nothing new
        assert snapshots(session, target) == [NOW.replace(minute=0)]

        collector.run(NOW + dt.timedelta(minutes=45))  # the next hour
        assert len(snapshots(session, target)) == 2

        three_days = NOW + dt.timedelta(days=3)
        collector.run(three_days)
        collector.run(three_days + 2 * HOUR)  # same day: daily buckets now
        assert snapshots(session, target)[-1] == three_days.replace(hour=0, minute=0)
        assert len(snapshots(session, target)) == 3

    def test_a_second_run_in_a_bucket_inserts_nothing(self, session, workspace, db, settings):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW)
        at = NOW + dt.timedelta(minutes=5)
        with db.transaction() as s:
            dispatch.enrol(s, now=at, limit=100)
            [(token, ids)], _ = dispatch.claim_due(s, now=at, settings=settings)
        runner.run_post_slice(database=db, settings=settings, connector_for=local_connectors, token=token,
                              tracked_ids=[str(i) for i in ids], now=at)
        # A duplicate job for the same bucket (a lease that ran out, say) claims again.
        with db.transaction() as s:
            s.execute(TrackedPost.__table__.update().values(next_due_at=at))
            [(token, ids)], _ = dispatch.claim_due(s, now=at, settings=settings)
        runner.run_post_slice(database=db, settings=settings, connector_for=local_connectors, token=token,
                              tracked_ids=[str(i) for i in ids], now=at)
        assert len(snapshots(session, target)) == 1

    def test_a_slice_whose_claim_was_taken_over_records_nothing(self, session, workspace, db, settings):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW)
        at = NOW + dt.timedelta(minutes=5)
        with db.transaction() as s:
            dispatch.enrol(s, now=at, limit=100)
            [(token, ids)], _ = dispatch.claim_due(s, now=at, settings=settings)
        result = runner.run_post_slice(database=db, settings=settings, connector_for=local_connectors,
                                       token="another-token", tracked_ids=[str(i) for i in ids], now=at)
        assert result["measured"] == 0 and snapshots(session, target) == []

    def test_targets_older_than_90_days_are_not_measured(self, session, workspace, collector):
        account = add_account(session, workspace)
        old = publish(session, account, at=NOW - dt.timedelta(days=91))
        collector.run(NOW)
        assert snapshots(session, old) == []

    def test_followers_once_a_day(self, session, workspace, collector):
        account = add_account(session, workspace)
        publish(session, account, at=NOW)
        collector.run(NOW + dt.timedelta(minutes=5))
        collector.run(NOW + 2 * HOUR)
        collector.run(NOW + dt.timedelta(days=1))
        session.expire_all()
        days = session.execute(select(FollowerSnapshot.bucket_start).where(FollowerSnapshot.account_id == account.id)).scalars()
        assert sorted(days) == [NOW.replace(hour=0, minute=0), NOW.replace(hour=0, minute=0) + dt.timedelta(days=1)]


class TestSandbox:
    def test_test_mode_shows_plausible_metrics_at_once(self, session, workspace, collector):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW - dt.timedelta(hours=5))
        collector.run(NOW)
        row = tracked_row(session, target)
        assert row.impressions > 0 and row.reach <= row.impressions
        assert row.engagements == row.likes + row.comments + row.shares + row.clicks
        # Impressions reported: the rate divides by them.
        assert row.engagement_rate == pytest.approx(row.engagements / row.impressions)
        assert row.followers_at_post and not row.livemode

    def test_the_day_rollup_follows_the_readings(self, session, workspace, collector):
        from persistence.analytics import DailyRollup

        account = add_account(session, workspace)
        targets = [publish(session, account, at=NOW - dt.timedelta(hours=h)) for h in (2, 3)]
        collector.run(NOW)
        collector.run(NOW + HOUR)  # counts grew: the rollup follows
        session.expire_all()
        rollup = session.execute(select(DailyRollup).where(
            DailyRollup.workspace_id == workspace.id, DailyRollup.platform == "*", DailyRollup.day == NOW.date(),
        )).scalar_one()
        rows = [tracked_row(session, target) for target in targets]
        assert rollup.posts == 2 and rollup.likes == sum(row.likes for row in rows) > 0
        assert rollup.impressions == sum(row.impressions for row in rows)

    def test_readings_are_deterministic(self, session, workspace, db, settings):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW - dt.timedelta(hours=5), external_id="sbx_fixed")
        from tests.analytics.conftest import Collector

        Collector(db, settings).run(NOW)
        first = tracked_row(session, target).engagements
        with db.transaction() as s:
            s.execute(TrackedPost.__table__.update().values(next_due_at=NOW))
        Collector(db, settings).run(NOW)
        assert tracked_row(session, target).engagements == first


class TestPlatforms:
    def test_mastodon_counts_through_the_local_server(self, session, workspace, collector, mastodon_server):
        mastodon_server.followers_count = 200
        account = mastodon_account(session, workspace, mastodon_server)
        status_id = mastodon_status(mastodon_server, favourites_count=10, reblogs_count=4, replies_count=6)
        target = publish(session, account, at=NOW - HOUR, external_id=status_id)

        collector.run(NOW)

        row = tracked_row(session, target)
        assert (row.likes, row.shares, row.comments, row.impressions, row.clicks) == (10, 4, 6, None, None)
        assert row.engagements == 20 and row.followers_at_post == 200 and row.livemode
        # No impressions on Mastodon: the rate divides by followers at post time.
        assert row.engagement_rate == pytest.approx(20 / 200)
        assert mastodon_server.calls_to(f"/api/v1/statuses/{status_id}")[-1].headers["authorization"] == f"Bearer {MASTODON_TOKEN}"

    def test_bluesky_counts_through_the_local_server(self, session, workspace, collector, bluesky_server):
        from socialpub.connectors.base import AccountCredentials
        from socialpub.outbound import Allowlist, GuardedClient

        secrets = {"identifier": bluesky_server.handle, "app_password": bluesky_server.password}
        account = add_account(session, workspace, livemode=True, platform="bluesky", connector="bluesky",
                              options={"service_url": bluesky_server.base_url}, secrets=secrets)
        credentials = AccountCredentials(account_id="x", platform="bluesky", handle="h",
                                         options={"service_url": bluesky_server.base_url}, secrets=secrets)
        uri = BlueskyConnector(GuardedClient(allowlist=Allowlist.parse("127.0.0.1"))).publish(
            credentials, "Measured", idempotency_key="b1").external_id
        bluesky_server.counts[uri] = {"likeCount": 8, "repostCount": 1, "quoteCount": 1, "replyCount": 2}
        bluesky_server.followers_count = 60
        target = publish(session, account, at=NOW - HOUR, external_id=uri)

        collector.run(NOW)

        row = tracked_row(session, target)
        assert (row.likes, row.shares, row.comments, row.engagements) == (8, 2, 2, 12)
        assert row.engagement_rate == pytest.approx(12 / 60)


class TestFailures:
    def test_a_rate_limit_pauses_the_account_until_retry_after(self, session, workspace, collector, mastodon_server):
        account = mastodon_account(session, workspace, mastodon_server)
        first = publish(session, account, at=NOW - HOUR, external_id=mastodon_status(mastodon_server, favourites_count=1))
        second = publish(session, account, at=NOW - HOUR, external_id=mastodon_status(mastodon_server, favourites_count=2))
        mastodon_server.fail_next(1, 429, headers={"Retry-After": "1800"}, path="/api/v1/statuses/")

        result = collector.run(NOW)

        assert result["paused"] == 2 and result["measured"] == 0
        session.expire_all()
        paused = session.execute(select(TrackedAccount).where(TrackedAccount.account_id == account.id)).scalar_one()
        assert paused.paused_until == NOW + dt.timedelta(seconds=1800) and paused.error_code == "rate_limited"
        asked = len(mastodon_server.calls_to("/api/v1/statuses/"))

        # Nothing of the account is asked for before then, however often the job runs.
        collector.run(NOW + dt.timedelta(minutes=10))
        collector.run(NOW + dt.timedelta(minutes=29))
        assert len(mastodon_server.calls_to("/api/v1/statuses/")) == asked

        collector.run(NOW + dt.timedelta(minutes=31))
        assert tracked_row(session, first).likes == 1 and tracked_row(session, second).likes == 2

    def test_a_rate_limited_follower_reading_pauses_the_whole_account(self, session, workspace, collector,
                                                                       mastodon_server):
        mastodon_server.followers_count = 40
        account = mastodon_account(session, workspace, mastodon_server)
        target = publish(session, account, at=NOW - HOUR, external_id=mastodon_status(mastodon_server, favourites_count=3))
        mastodon_server.fail_next(1, 429, headers={"Retry-After": "600"}, path="verify_credentials")

        collector.run(NOW)

        session.expire_all()
        tracked_account = session.execute(select(TrackedAccount).where(TrackedAccount.account_id == account.id)).scalar_one()
        assert tracked_account.paused_until == NOW + dt.timedelta(seconds=600) and tracked_account.followers is None
        # Its posts wait too: nothing of a rate-limited account is asked for.
        assert tracked_row(session, target).captured_at is None
        assert mastodon_server.calls_to("/api/v1/statuses/") == []

        collector.run(NOW + dt.timedelta(minutes=11))
        session.expire_all()
        assert tracked_row(session, target).likes == 3
        assert tracked_row(session, target).followers_at_post == 40

    def test_one_failing_account_does_not_stop_the_others(self, session, workspace, collector, mastodon_server):
        good = mastodon_account(session, workspace, mastodon_server)
        refused = mastodon_account(session, workspace, mastodon_server, token="revoked-token-1", handle="@old")
        good_target = publish(session, good, at=NOW - HOUR, external_id=mastodon_status(mastodon_server, favourites_count=5))
        bad_target = publish(session, refused, at=NOW - HOUR, external_id=mastodon_status(mastodon_server, favourites_count=9))
        sandbox = add_account(session, workspace)
        sandbox_target = publish(session, sandbox, at=NOW - HOUR)

        result = collector.run(NOW)

        assert result["measured"] == 2 and result["failed"] == 1
        assert tracked_row(session, good_target).likes == 5
        assert tracked_row(session, sandbox_target).captured_at is not None
        failed = tracked_row(session, bad_target)
        assert failed.captured_at is None and failed.error_code == "platform_auth_failed"
        # Tried again in the next bucket, not at every run.
        assert failed.next_due_at == (NOW + HOUR).replace(minute=0) and failed.lease_until is None

    def test_a_connector_that_breaks_fails_only_its_account(self, session, workspace, collector):
        broken_account = add_account(session, workspace, livemode=True, platform="bluesky", connector="bluesky")
        fine_account = add_account(session, workspace)
        broken = publish(session, broken_account, at=NOW - HOUR)
        fine = publish(session, fine_account, at=NOW - HOUR)

        class Broken:
            def fetch_post_metrics(self, *args, **kwargs):
                raise RuntimeError("a bug")

            def fetch_account_metrics(self, *args, **kwargs):
                raise RuntimeError("a bug")

        collector.run(NOW, lambda name: Broken() if name == "bluesky" else local_connectors(name))

        assert tracked_row(session, broken).error_code == "internal_error"
        assert tracked_row(session, fine).captured_at is not None


class TestJob:
    def test_the_snapshot_job_is_periodic_and_hands_slices_to_the_queue(self, db, settings, session, workspace):
        assert any(p.function is jobs.snapshot_metrics for p in periodic_jobs())
        account = add_account(session, workspace)
        for hours in range(3):
            publish(session, account, at=NOW - hours * HOUR)
        queue = HeldQueue()
        try:
            with clock.installed(clock.FakeClock(NOW)):
                handed = dispatch.dispatch(database=db, queue=queue, settings=settings.replace(analytics_slice_size=2),
                                           post_job=jobs.collect_post_metrics, account_job=jobs.collect_account_metrics)
            assert handed == 4  # three targets, one account
            assert len(queue.waiting_job_ids()) == 3  # an account slice, two target slices
        finally:
            queue.close()
        session.expire_all()
        assert session.execute(select(func.count()).select_from(TrackedPost).where(TrackedPost.claim_token.is_not(None))).scalar() == 3
