"""A chunk that fails: one that raises is applied again a post at a time, the post
that raises refused alone with `internal_error`; one that kills its worker before it
commits, every time, is counted at each takeover, and after bulk_max_runs of them the
operation ends `failed`, the posts done before it staying done and the rest named in
`errors`."""
import datetime as dt
import uuid

import pytest
from sqlalchemy import select

from persistence.bulk import BulkOperation
from persistence.events import Event
from persistence.types import utcnow
from socialpub.bulk import runner
from socialpub.bulk.jobs import run_bulk_operation
from tests.support.bulk import new_post, operation, post_of, started
from tests.support.settings import test_settings

CHUNK, MAX_RUNS, POSTS = 2, 2, 5


@pytest.fixture
def settings(database_url, test_redis_url):
    return test_settings(database_url, test_redis_url, bulk_chunk_size=CHUNK, bulk_max_runs=MAX_RUNS)


class WorkerKilled(BaseException):
    """What a run sees of its process being killed: nothing after this point runs,
    and its open transaction is never committed."""


def poison(monkeypatch, post_id: str, error: BaseException) -> list:
    """Makes every chunk holding `post_id` fail; returns the list of failed attempts."""
    real_apply = runner.apply
    attempts = []

    def apply(session, operation_, chunk):
        if any(entry_id == post_id for entry_id, _ in chunk):
            attempts.append(operation_.runs)
            raise error
        real_apply(session, operation_, chunk)

    monkeypatch.setattr(runner, "apply", apply)
    return attempts


def sweep_after_the_lease(app) -> int:
    """The sweeper's pass once the lease of whatever run held the operation is over."""
    runtime = app.app.extensions["socialpub"]
    return runner.resume_stalled(
        database=runtime.database, queue=runtime.queue, settings=runtime.settings, run=run_bulk_operation,
        now=lease_runs_out(app),
    )


def lease_runs_out(app):
    return utcnow() + dt.timedelta(seconds=app.app.extensions["socialpub"].settings.bulk_lease_seconds + 1)


def expire_lease(session, operation_id: str) -> None:
    session.execute(
        BulkOperation.__table__.update().where(BulkOperation.id == uuid.UUID(operation_id))
        .values(lease_until=utcnow() - dt.timedelta(seconds=1))
    )
    session.commit()


def assert_failed_at_the_poisoned_chunk(client, session, key, operation_id: str, posts: list[str]) -> None:
    done = operation(client, key, operation_id)
    assert (done["status"], done["processed"], done["succeeded"], done["failed"]) == ("failed", POSTS, CHUNK, POSTS - CHUNK)
    assert done["completedAt"]
    assert [(e["postId"], e["code"]) for e in done["errors"]] == [(p, "internal_error") for p in posts[CHUNK:]]
    assert all("nothing was done to this post" in e["message"] for e in done["errors"]), done["errors"]
    for post_id in posts[:CHUNK]:
        assert post_of(client, key, post_id).json()["data"]["archivedAt"] is not None, "done before stays done"
    for post_id in posts[CHUNK:]:
        assert post_of(client, key, post_id).json()["data"]["archivedAt"] is None
    session.expire_all()
    stored = session.get(BulkOperation, uuid.UUID(operation_id))
    assert stored.runs == MAX_RUNS + 1 and stored.claim_token is None and stored.lease_until is None
    events = session.execute(select(Event).where(Event.type == "bulk.completed")).scalars().all()
    assert [e.data["bulkOperation"]["status"] for e in events] == ["failed"]


def test_a_post_that_always_raises_is_refused_alone_and_the_others_go_on(app, client, session, key, jobs, monkeypatch):
    posts = [new_post(client, key) for _ in range(POSTS)]
    attempts = poison(monkeypatch, posts[CHUNK], RuntimeError("the post's work blew up"))
    data = started(client, key, action="archive", postIds=posts)
    jobs.run()
    # Once with its chunk, once alone: no sweep, no second run.
    assert len(attempts) == 2
    done = operation(client, key, data["id"])
    assert (done["status"], done["processed"], done["succeeded"], done["failed"]) == ("completed", POSTS, POSTS - 1, 1)
    [error] = done["errors"]
    assert (error["postId"], error["code"]) == (posts[CHUNK], "internal_error")
    assert "RuntimeError" in error["message"] and "nothing was done to it" in error["message"]
    for post_id in posts:
        archived = post_of(client, key, post_id).json()["data"]["archivedAt"]
        assert (archived is None) == (post_id == posts[CHUNK])
    events = session.execute(select(Event).where(Event.type == "bulk.completed")).scalars().all()
    assert [e.data["bulkOperation"]["status"] for e in events] == ["completed"]
    assert sweep_after_the_lease(app) == 0, "a completed operation is not queued again"


@pytest.mark.parametrize("poisoned", [0, CHUNK], ids=["first chunk", "a later chunk"])
def test_a_chunk_that_always_kills_its_worker_fails_the_operation(app, db, client, session, key, jobs, monkeypatch, poisoned):
    runtime = app.app.extensions["socialpub"]
    posts = [new_post(client, key) for _ in range(POSTS)]
    attempts = poison(monkeypatch, posts[poisoned], WorkerKilled())
    data = started(client, key, action="archive", postIds=posts)
    jobs.forget()
    outcomes = []
    for _ in range(MAX_RUNS + 3):
        try:
            outcomes.append(runner.run_operation(database=db, settings=runtime.settings, operation_id=data["id"]))
        except WorkerKilled:
            outcomes.append("killed")
            # Nobody sweeps: the next run finds the dead run's lease over by itself.
            expire_lease(session, data["id"])
            continue
        break
    assert outcomes == ["killed"] * (MAX_RUNS + 1) + ["failed"]
    assert attempts == list(range(MAX_RUNS + 1))
    done = operation(client, key, data["id"])
    assert (done["status"], done["processed"], done["succeeded"]) == ("failed", POSTS, poisoned)
    assert [e["postId"] for e in done["errors"]] == posts[poisoned:]
    if poisoned == CHUNK:
        assert_failed_at_the_poisoned_chunk(client, session, key, data["id"], posts)


def test_a_chunk_that_fails_once_then_works_completes(app, db, client, session, key, jobs, monkeypatch):
    posts = [new_post(client, key) for _ in range(POSTS)]
    real_apply = runner.apply
    failures = []

    def flaky(session_, operation_, chunk):
        if not failures and any(entry_id == posts[CHUNK] for entry_id, _ in chunk):
            failures.append(operation_.runs)
            raise RuntimeError("a passing failure")
        real_apply(session_, operation_, chunk)

    monkeypatch.setattr(runner, "apply", flaky)
    data = started(client, key, action="archive", postIds=posts)
    jobs.run()
    done = operation(client, key, data["id"])
    assert (done["status"], done["processed"], done["succeeded"], done["failed"]) == ("completed", POSTS, POSTS, 0)
    assert failures == [0], "applied post by post after one failure, the chunk's posts all went through"
