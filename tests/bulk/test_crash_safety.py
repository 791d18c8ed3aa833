"""A real `socialpub worker` on PostgreSQL and RQ killed in the middle of a bulk
operation: after a restart the operation completes, and no item was applied twice.

Scheduling a draft writes one `post.scheduled` event in the same transaction as the
change, and a second application of the same item would find the post no longer a
draft (a conflict): so one event per post and no item error prove each item took
effect exactly once.
"""
from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
from sqlalchemy import func, select

from persistence.bulk import BulkOperation
from persistence.events import Event
from persistence.posts import Post, PostTarget
from persistence.types import utcnow
from socialpub.config import Settings
from socialpub.principal import Principal
from socialpub.keys import service as api_keys
from socialpub.bulk import service as bulk
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.factories import Key, make_drafts
from tests.support.processes import wait_registered
from workers.queue import RQQueue
from tests.support.factories import OPERATOR

pytestmark = pytest.mark.slow

POSTS = 500
BULK_ENV = {
    # Small chunks and a short lease: the kill lands between and inside chunks, and
    # the restarted worker's sweeper takes the operation over within seconds.
    "SOCIALPUB_BULK_CHUNK_SIZE": "5",
    "SOCIALPUB_BULK_LEASE_SECONDS": "2",
}


@pytest.fixture
def redis_url():
    """The run's own Redis database (TEST_REDIS_URL), emptied before and after: a
    fixed database number would be shared with other runs on the same Redis."""
    from redis import Redis

    url = backends.require_redis()
    connection = Redis.from_url(url)
    connection.flushdb()
    yield url
    connection.flushdb()
    connection.close()


def make_workspace_with_drafts(database, count: int) -> tuple[Principal, list[str]]:
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Bulk crash safety", plan="business")
        model, value = api_keys.create_api_key(
            session=session, actor=OPERATOR, workspace_id=workspace.id, name="bulk", scopes=["posts:write"], mode="test"
        )
        return Key(model=model, value=value).principal, make_drafts(session, workspace, count, label="Bulk crash safety")


def progress(database, operation_id) -> BulkOperation:
    with database.transaction() as session:
        return session.get(BulkOperation, uuid.UUID(operation_id))


def test_a_worker_killed_mid_bulk_loses_nothing_and_applies_nothing_twice(crash_database, redis_url, workers, capsys):
    database = crash_database
    principal, post_ids = make_workspace_with_drafts(database, POSTS)
    first = workers("worker-1", redis_url, **BULK_ENV)
    wait_registered(redis_url, 1, [first])

    settings = Settings(database_url="unused", bulk_lease_seconds=2)
    queue = RQQueue(redis_url)
    try:
        with database.transaction() as session:
            created = bulk.create_operation(
                session=session, principal=principal, database=database, queue=queue, settings=settings,
                action="schedule", post_ids=post_ids, scheduled_at=utcnow() + dt.timedelta(days=1),
            )
            operation_id = str(created.id)
    finally:
        queue.close()

    deadline = time.monotonic() + 60
    while progress(database, operation_id).processed < POSTS // 5:
        assert time.monotonic() < deadline, "the operation did not start"
        assert first.alive, first.output()
        time.sleep(0.01)
    first.crash()
    at_kill = progress(database, operation_id)
    assert at_kill.status == "running" and at_kill.processed < POSTS, "the kill must land mid-operation"

    started = time.monotonic()
    second = workers("worker-2", redis_url, **BULK_ENV)
    while progress(database, operation_id).status != "completed":
        assert time.monotonic() - started < 60, f"not completed after the restart:\n{second.output()}"
        assert second.alive, second.output()
        time.sleep(0.1)
    took = time.monotonic() - started

    done = progress(database, operation_id)
    assert (done.processed, done.succeeded, done.failed) == (POSTS, POSTS, 0)
    assert done.runs >= 1, "a second run took the operation over"
    with database.transaction() as session:
        statuses = dict(session.execute(select(Post.status, func.count()).group_by(Post.status)).all())
        events = session.execute(select(Event.data).where(Event.type == "post.scheduled")).scalars().all()
        targets = session.execute(
            select(PostTarget.post_id, func.count()).group_by(PostTarget.post_id)
        ).all()
        completed_events = session.execute(
            select(func.count()).select_from(Event).where(Event.type == "bulk.completed")
        ).scalar_one()
    per_post: dict[str, int] = {}
    for data in events:
        per_post[data["post"]["id"]] = per_post.get(data["post"]["id"], 0) + 1
    assert statuses == {"scheduled": POSTS}
    assert per_post == {post_id: 1 for post_id in post_ids}, "each item applied exactly once"
    assert {count for _, count in targets} == {1} and len(targets) == POSTS
    assert completed_events == 1
    with capsys.disabled():
        print(
            f"\n[bulk crash safety] {POSTS} posts; worker killed at {at_kill.processed} processed; "
            f"completed {took:.1f} s after the restart; runs taken over {done.runs}; items applied twice 0"
        )
