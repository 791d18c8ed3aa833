"""The dispatcher: targets enrolled when their publication is recorded are measured by
the next claim pass, seconds later; the sweep enrols what that missed; slices reach
the queue through claims.hand_out, and what the queue refused is claimed again by
the next pass."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import event, func, select

from persistence.analytics import TrackedAccount, TrackedPost
from socialpub import claims, clock
from socialpub.analytics import dispatch, jobs
from tests.analytics.conftest import NOW, add_account, publish
from tests.support.jobs import HeldQueue
from workers import context
from workers.registry import periodic_jobs

URL = "/api/v1/analytics"


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


@pytest.fixture
def queue(db, settings):
    """The queue the dispatcher's jobs hand slices to, run in the test's thread."""
    held = HeldQueue()
    previous = (context._database, context._queue, context._settings)
    context.install(db, queue=held, settings=settings)
    yield held
    held.close()
    context._database, context._queue, context._settings = previous


class FailingQueue(HeldQueue):
    """Takes `accepts` jobs, then goes away."""

    def __init__(self, accepts: int):
        super().__init__()
        self.accepts = accepts

    def enqueue(self, function, *args, job_id=None, **kwargs):
        if len(self.held) >= self.accepts:
            raise ConnectionError("queue down")
        super().enqueue(function, *args, job_id=job_id, **kwargs)


def tracked_row(session, target) -> TrackedPost | None:
    session.expire_all()
    return session.execute(select(TrackedPost).where(TrackedPost.target_id == target.id)).scalar_one_or_none()


def claimed(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model).where(model.claim_token.is_not(None))).scalar()


def enrol(db, *targets, at=NOW) -> int:
    """What the publishing transaction does when it records these publications."""
    with db.transaction() as session:
        return dispatch.enrol_targets(session, [target.id for target in targets], now=at)


def claim_pass(db, queue, settings, at=NOW) -> int:
    return dispatch.claim_and_hand_out(database=db, queue=queue, settings=settings, now=at,
                                       post_job=jobs.collect_post_metrics, account_job=jobs.collect_account_metrics)


class TestEnrolmentAtPublication:
    def test_a_target_enrolled_at_publication_is_measured_by_the_next_claim_pass(
        self, client, key, db, session, workspace, queue, fake_clock,
    ):
        account = add_account(session, workspace)
        target = publish(session, account, at=NOW)
        assert enrol(db, target) == 1

        fake_clock.advance(5)
        assert jobs.claim_due_metrics() == 2  # the target and its account
        queue.drain()

        row = tracked_row(session, target)
        # Measured: five seconds after publication the sandbox's impressions may still
        # round down to 0 (a post drawn with few followers), so only their presence is checked.
        assert row.captured_at == NOW + dt.timedelta(seconds=5) and row.impressions is not None
        assert row.next_due_at == (NOW + dt.timedelta(hours=1)).replace(minute=0, second=0)
        # In the test mode's reports at once, not after the next sweep.
        posts = client.get(f"{URL}/posts", headers=key.headers).json()["data"]
        assert [item["targetId"] for item in posts] == [str(target.id)]
        overview = client.get(f"{URL}/overview", headers=key.headers, params={"period": "7d"}).json()["data"]
        assert overview["totals"]["posts"] == 1 and overview["totals"]["impressions"] == row.impressions
        top = client.get(f"{URL}/top-posts", headers=key.headers).json()["data"]
        assert [item["targetId"] for item in top["posts"]] == [str(target.id)]

    def test_enrolling_twice_enrols_once_and_the_account_once(self, db, session, workspace):
        account = add_account(session, workspace)
        first, second = publish(session, account, at=NOW), publish(session, account, at=NOW)
        assert enrol(db, first) == 1
        assert enrol(db, first, second) == 1
        assert enrol(db, first, second) == 0
        session.expire_all()
        assert session.execute(select(func.count()).select_from(TrackedPost)).scalar() == 2
        accounts = session.execute(select(TrackedAccount)).scalars().all()
        assert [(a.account_id, a.next_due_at, a.livemode) for a in accounts] == [(account.id, NOW, False)]

    def test_it_writes_in_the_callers_transaction_and_commits_nothing(self, db, session, workspace):
        target = publish(session, add_account(session, workspace), at=NOW)
        with db.transaction() as outer:
            assert dispatch.enrol_targets(outer, [target.id], now=NOW) == 1
            outer.rollback()
        assert tracked_row(session, target) is None

    def test_targets_that_are_not_measured_are_skipped(self, db, session, workspace):
        telegram = add_account(session, workspace, platform="telegram", connector="telegram", handle="@chan")
        unmeasured = publish(session, telegram, at=NOW)
        failed = publish(session, add_account(session, workspace), at=NOW)
        failed.status, failed.external_id = "failed", None
        session.commit()
        old = publish(session, add_account(session, workspace, handle="@old"), at=NOW - dt.timedelta(days=91))

        assert enrol(db, unmeasured, failed, old) == 0
        assert dispatch.enrol_targets(session, [], now=NOW) == 0
        session.expire_all()
        assert session.execute(select(func.count()).select_from(TrackedPost)).scalar() == 0
        assert session.execute(select(func.count()).select_from(TrackedAccount)).scalar() == 0

    def test_it_costs_a_few_statements_whatever_else_is_tracked(self, db, session, workspace):
        account = add_account(session, workspace)
        for _ in range(5):
            publish(session, account, at=NOW - dt.timedelta(hours=2))
        with db.transaction() as s:
            dispatch.enrol(s, now=NOW, limit=100)  # these, and the account, tracked already
        newer = publish(session, account, at=NOW)
        new_account = add_account(session, workspace, handle="@new")
        newest = publish(session, new_account, at=NOW)

        statements = []
        with db.transaction() as s:
            connection = s.connection()

            def count(connection, cursor, statement, *args):
                statements.append(statement)

            event.listen(connection, "before_cursor_execute", count)
            try:
                # The targets read (their accounts' tracking with them), their rows inserted.
                assert dispatch.enrol_targets(s, [newer.id], now=NOW) == 1
                assert len(statements) == 2
                statements.clear()
                # An account not tracked yet: one more.
                assert dispatch.enrol_targets(s, [newest.id], now=NOW) == 1
                assert len(statements) == 3
            finally:
                event.remove(connection, "before_cursor_execute", count)


class TestSweep:
    def test_the_sweep_enrols_what_enrolment_at_publication_missed(self, db, session, workspace, queue, fake_clock):
        account = add_account(session, workspace)
        missed = publish(session, account, at=NOW - dt.timedelta(minutes=1))

        assert jobs.claim_due_metrics() == 0  # nothing enrolled: nothing due
        assert jobs.snapshot_metrics() == 2  # the target and its account
        queue.drain()

        assert tracked_row(session, missed).captured_at == NOW

    def test_the_claim_pass_runs_every_few_seconds_and_the_sweep_stays(self, settings):
        every = {p.function: p.interval(settings) for p in periodic_jobs()}
        assert every[jobs.claim_due_metrics] <= 10
        assert every[jobs.snapshot_metrics] == settings.analytics_snapshot_interval_seconds


class TestHandingOut:
    def test_each_slice_is_one_job_named_by_its_token(self, db, session, workspace, settings):
        account = add_account(session, workspace)
        targets = [publish(session, account, at=NOW) for _ in range(3)]
        enrol(db, *targets)
        queue = HeldQueue()
        assert claim_pass(db, queue, settings.replace(analytics_slice_size=2)) == 4
        runs = [(function, args, job_id) for function, args, _, job_id in queue.held]
        assert [function for function, _, _ in runs] == [
            jobs.collect_account_metrics, jobs.collect_post_metrics, jobs.collect_post_metrics,
        ]
        assert [len(ids) for _, (_, ids), _ in runs] == [1, 2, 1]
        assert all(job_id == f"analytics-{token}" for _, (token, _), job_id in runs)
        queue.close()

    @pytest.mark.parametrize("accepts, handed", [(0, 0), (1, 1), (2, 2)])
    def test_what_the_queue_refused_is_claimed_again_by_the_next_pass(
        self, db, session, workspace, settings, accepts, handed,
    ):
        account = add_account(session, workspace)
        enrol(db, *[publish(session, account, at=NOW) for _ in range(3)])
        one_a_job = settings.replace(analytics_slice_size=1)

        assert claim_pass(db, FailingQueue(accepts), one_a_job) == handed

        # What was queued stays claimed; the slice refused and those after it do not.
        assert claimed(session, TrackedAccount) + claimed(session, TrackedPost) == handed
        queue = HeldQueue()
        assert claim_pass(db, queue, one_a_job) == 4 - handed
        assert claimed(session, TrackedAccount) + claimed(session, TrackedPost) == 4
        queue.close()

    def test_hand_out_releases_a_refused_slice_and_the_slices_after_it(self, db, session, workspace, settings):
        account = add_account(session, workspace)
        enrol(db, *[publish(session, account, at=NOW) for _ in range(3)])
        with db.transaction() as s:
            slices, _ = dispatch.claim_due(s, now=NOW, settings=settings.replace(analytics_slice_size=1))
        queue = FailingQueue(accepts=1)

        handed = claims.hand_out(database=db, queue=queue, run=jobs.collect_post_metrics, model=TrackedPost,
                                 slices=slices, job_name="analytics")

        assert handed == 1
        [(_, (token, ids), _, job_id)] = queue.held
        assert (token, ids, job_id) == (slices[0][0], [str(slices[0][1][0])], f"analytics-{slices[0][0]}")
        session.expire_all()
        held = session.execute(select(TrackedPost.id, TrackedPost.claim_token, TrackedPost.lease_until)).all()
        assert {row.id for row in held if row.claim_token} == {slices[0][1][0]}
        assert all(row.lease_until is None for row in held if row.claim_token is None)
        queue.close()
