"""The daily rollups are kept by adding each measurement's change: after any run of
the snapshot job, and after a post's deletion, the kept rows equal the targets summed
again (`rollups.day_groups`), a post to several accounts counting once per day and
platform, whichever slice measured which of its targets first."""
from __future__ import annotations

import dataclasses
import datetime as dt
import time
import uuid

import pytest
from sqlalchemy import select

from persistence.analytics import DailyRollup, TrackedPost
from persistence.posts import Post, PostTarget
from socialpub import clock
from socialpub.analytics import rollups
from tests.analytics.conftest import NOW, Collector, add_account, local_connectors

HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)


@pytest.fixture(autouse=True)
def now():
    with clock.installed(clock.FakeClock(NOW)):
        yield NOW


def publish_to(session, *targets: tuple) -> Post:
    """One post published to several accounts, each target at its own time:
    `targets` are (account, published_at)."""
    first = targets[0][0]
    post = Post(workspace_id=first.workspace_id, livemode=first.livemode, content="Everywhere",
                platforms=sorted({account.platform for account, _ in targets}), status="published",
                published_at=min(at for _, at in targets))
    session.add(post)
    session.flush()
    for account, at in targets:
        session.add(PostTarget(
            workspace_id=account.workspace_id, livemode=account.livemode, post_id=post.id, account_id=account.id,
            platform=account.platform, status="published", external_id=f"sbx_{uuid.uuid4().hex[:20]}", published_at=at,
        ))
    session.commit()
    return post


def kept(session, workspace) -> dict[tuple, tuple[int, ...]]:
    session.expire_all()
    return {
        (row.workspace_id, row.livemode, row.day, row.platform): tuple(getattr(row, name) for name in rollups.SUM_NAMES)
        for row in session.execute(select(DailyRollup).where(DailyRollup.workspace_id == workspace.id)).scalars()
    }


def summed(session, workspace) -> dict[tuple, tuple[int, ...]]:
    session.expire_all()
    return rollups.day_groups(session, TrackedPost.workspace_id == workspace.id)


@pytest.fixture
def accounts(session, workspace):
    return (
        add_account(session, workspace, handle="@one"),
        add_account(session, workspace, handle="@two"),
        add_account(session, workspace, platform="mastodon", handle="@three"),
    )


@pytest.fixture
def posts(session, accounts):
    one, two, three = accounts
    yesterday = NOW - DAY
    return dict(
        # Three accounts, two on one platform, one day: one post in each group.
        everywhere=publish_to(session, (one, NOW - 3 * HOUR), (two, NOW - 2 * HOUR), (three, NOW - 3 * HOUR)),
        # Its targets on two days (before and after midnight): a post on each day.
        midnight=publish_to(session, (one, yesterday.replace(hour=23, minute=50)), (three, NOW.replace(hour=0, minute=10))),
        alone=publish_to(session, (two, yesterday)),
    )


def test_kept_rows_equal_the_targets_summed_after_every_run(session, workspace, posts, collector):
    for at in (NOW, NOW + HOUR, NOW + 5 * HOUR, NOW + 2 * DAY):
        collector.run(at)
        assert kept(session, workspace) == summed(session, workspace)
    groups = kept(session, workspace)
    today, yesterday = NOW.date(), (NOW - DAY).date()
    posts_of = {(day, platform): sums[0] for (_, _, day, platform), sums in groups.items()}
    assert posts_of == {
        (today, "*"): 2, (today, "twitter"): 1, (today, "mastodon"): 2,
        (yesterday, "*"): 2, (yesterday, "twitter"): 2,
    }
    assert all(sums[rollups.SUM_NAMES.index("impressions")] > 0 for sums in groups.values())


def test_a_post_first_measured_by_two_slices_counts_once(session, workspace, accounts, db, settings):
    # One target per slice: the post's second target is measured by a later slice,
    # after the first one's reading is recorded.
    one, two, _ = accounts
    publish_to(session, (one, NOW - 2 * HOUR), (two, NOW - HOUR))
    result = Collector(db, dataclasses.replace(settings, analytics_slice_size=1)).run(NOW)
    assert result["measured"] == 2
    groups = kept(session, workspace)
    assert groups == summed(session, workspace)
    assert groups[(workspace.id, False, NOW.date(), "*")][0] == 1


def test_a_deleted_post_leaves_the_rollups(client, key, session, workspace, posts, collector):
    collector.run(NOW)
    before = kept(session, workspace)
    response = client.delete(f"/api/v1/posts/{posts['everywhere'].id}", headers=key.headers)
    assert response.status_code == 200, response.text
    after = kept(session, workspace)
    assert after == summed(session, workspace)
    today = (workspace.id, False, NOW.date())
    assert after[(*today, "*")][0] == before[(*today, "*")][0] - 1
    # Its twitter targets were today's only ones on twitter: the row goes.
    assert (*today, "twitter") not in after and (*today, "mastodon") in after
    response = client.delete(f"/api/v1/posts/{posts['midnight'].id}", headers=key.headers)
    assert response.status_code == 200, response.text
    assert kept(session, workspace) == summed(session, workspace)
    assert not any(day == NOW.date() for (_, _, day, _) in kept(session, workspace))


def test_a_rebuild_gives_the_kept_rows(session, workspace, posts, collector):
    collector.run(NOW)
    collector.run(NOW + HOUR)
    before = kept(session, workspace)
    rollups.refresh_days(session, {(workspace.id, False, day) for (_, _, day, _) in before})
    session.commit()
    assert kept(session, workspace) == before


def test_two_jobs_measuring_one_post_at_once_count_it_once(committed_database, settings, monkeypatch):
    """The second job's read of the post's targets waits for the first job's
    transaction, then sees its reading: the post is counted by one of them."""
    import threading

    from sqlalchemy import func

    from socialpub.analytics import dispatch, runner
    from socialpub.workspaces import service as workspaces
    from tests.support import backends

    backends.require_postgres()  # row locks: SQLite's writers take turns anyway
    database = committed_database
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Two jobs", plan="business")
        one, two = (add_account(session, workspace, handle=handle) for handle in ("@one", "@two"))
        publish_to(session, (one, NOW - 2 * HOUR), (two, NOW - HOUR))
        dispatch.enrol(session, now=NOW, limit=10)
        slices, _ = dispatch.claim_due(session, now=NOW, settings=dataclasses.replace(settings, analytics_slice_size=1))
    assert len(slices) == 2

    def run(token, ids):
        runner.run_post_slice(database=database, settings=settings, connector_for=local_connectors,
                              token=token, tracked_ids=[str(i) for i in ids], now=NOW)

    real_lock = rollups.lock_targets
    second_pid: list[int] = []
    second = threading.Thread(target=run, args=slices[1])

    def lock_targets(session, **kwargs):
        if threading.current_thread() is second:
            second_pid.append(session.execute(select(func.pg_backend_pid())).scalar_one())
            return real_lock(session, **kwargs)
        rows = real_lock(session, **kwargs)
        second.start()  # the first job holds its locks: the second one starts now

        def second_waits_or_is_done() -> bool:
            if not second.is_alive():
                return True
            if not second_pid:
                return False
            with database.transaction() as probe:
                return bool(probe.execute(select(func.cardinality(func.pg_blocking_pids(second_pid[0])))).scalar_one())

        deadline = time.monotonic() + 10
        while not second_waits_or_is_done():
            assert time.monotonic() < deadline, "the second job neither waited nor finished"
            time.sleep(0.01)
        return rows

    monkeypatch.setattr(rollups, "lock_targets", lock_targets)
    run(*slices[0])
    second.join(10)
    assert not second.is_alive()
    with database.transaction() as session:
        groups = rollups.day_groups(session, TrackedPost.workspace_id == workspace.id)
        assert len(session.execute(select(TrackedPost.id).where(TrackedPost.captured_at.is_not(None))).all()) == 2
        stored = {
            (row.workspace_id, row.livemode, row.day, row.platform): tuple(getattr(row, n) for n in rollups.SUM_NAMES)
            for row in session.execute(select(DailyRollup)).scalars()
        }
    assert stored == groups
    assert stored[(workspace.id, False, NOW.date(), "*")][0] == 1
