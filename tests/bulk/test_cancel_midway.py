"""Cancelling a bulk operation while a real worker runs it: the in-process queue runs
the job on its own thread against a committed database, and a hook holds the run
between chunks, or inside one, so the test can cancel at a known point.

Cancellation takes effect at the next chunk boundary: a chunk commits as a unit, and
a cancel that arrives during one waits for it (the operation's lock) and answers
with it counted. Items done stay done; none after the cancel are applied."""
from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select

from persistence.events import Event
from persistence.posts import Post
from socialpub.app import create_app
from socialpub.bulk import runner
from tests.support.databases import committed_database_url
from tests.support.bulk import later
from tests.support.settings import test_settings
from tests.support.factories import make_drafts, make_key, make_workspace

CHUNK, POSTS = 3, 12
WAIT = 30


@pytest.fixture
def worker_app(tmp_path):
    """An app whose jobs run on its own thread pool, on a database of the test's own."""
    with committed_database_url(tmp_path) as url:
        application = create_app(test_settings(url, None, bulk_chunk_size=CHUNK, inline_job_workers=2))
        runtime = application.app.extensions["socialpub"]
        try:
            yield application, runtime
        finally:
            runtime.queue.close()
            runtime.database.dispose()


@pytest.fixture
def drafts(worker_app):
    _, runtime = worker_app
    with runtime.database.transaction() as session:
        workspace = make_workspace(session, name="Cancel midway")
        return make_key(session, workspace), make_drafts(session, workspace, POSTS, label="Midway")


def start_scheduling(client, key, post_ids) -> str:
    response = client.post("/api/v1/bulk", headers=key.headers,
                           json={"action": "schedule", "postIds": post_ids, "scheduledAt": later(days=1)})
    assert response.status_code == 202, response.text
    return response.json()["data"]["id"]


def wait_until(condition, failure: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


def statuses(runtime, post_ids) -> list[str]:
    with runtime.database.transaction() as session:
        by_id = {str(p.id): p.status for p in session.execute(select(Post)).scalars()}
    return [by_id[post_id] for post_id in post_ids]


def events(runtime, type_: str) -> list[dict]:
    with runtime.database.transaction() as session:
        return [e.data for e in session.execute(select(Event).where(Event.type == type_)).scalars()]


def assert_stopped_after(runtime, client, key, operation_id, post_ids, done: int) -> None:
    final = client.get(f"/api/v1/bulk/{operation_id}", headers=key.headers).json()["data"]
    assert (final["status"], final["total"], final["processed"], final["succeeded"], final["failed"]) == (
        "cancelled", POSTS, done, done, 0)
    assert final["errors"] == [] and final["completedAt"]
    assert statuses(runtime, post_ids) == ["scheduled"] * done + ["draft"] * (POSTS - done)
    scheduled = sorted(data["post"]["id"] for data in events(runtime, "post.scheduled"))
    assert scheduled == sorted(post_ids[:done]), "each item done once, none after the cancel"
    completed = [data["bulkOperation"] for data in events(runtime, "bulk.completed")]
    assert [(c["id"], c["status"], c["processed"]) for c in completed] == [(operation_id, "cancelled", done)]


def test_a_cancel_between_chunks_stops_the_running_worker_there(worker_app, drafts, monkeypatch):
    application, runtime = worker_app
    key, post_ids = drafts
    real_run_chunk = runner.run_chunk
    outcomes, between, resume = [], threading.Event(), threading.Event()

    def run_chunk(**kwargs):
        outcome = real_run_chunk(**kwargs)
        outcomes.append(outcome)
        if outcomes.count("continue") == 2:
            between.set()
            assert resume.wait(WAIT)
        return outcome

    monkeypatch.setattr(runner, "run_chunk", run_chunk)
    with application.test_client() as client:
        operation_id = start_scheduling(client, key, post_ids)
        assert between.wait(WAIT), "the worker did not get through two chunks"

        progress = client.get(f"/api/v1/bulk/{operation_id}", headers=key.headers).json()["data"]
        assert (progress["status"], progress["processed"], progress["succeeded"]) == ("running", 2 * CHUNK, 2 * CHUNK)
        cancelled = client.post(f"/api/v1/bulk/{operation_id}/cancel", headers=key.headers)
        assert cancelled.status_code == 200, cancelled.text
        assert (cancelled.json()["data"]["status"], cancelled.json()["data"]["processed"]) == ("cancelled", 2 * CHUNK)

        resume.set()
        runtime.queue.drain(timeout=WAIT)
        assert outcomes == ["continue", "continue", "cancelled"], "the run stopped at the next chunk"
        assert_stopped_after(runtime, client, key, operation_id, post_ids, 2 * CHUNK)


def test_a_cancel_during_a_chunk_waits_for_it_and_counts_it(worker_app, drafts, monkeypatch):
    application, runtime = worker_app
    key, post_ids = drafts
    real_apply = runner.apply
    in_chunk, release = threading.Event(), threading.Event()

    def apply(session, operation, chunk):
        if operation.processed == 2 * CHUNK:
            in_chunk.set()
            assert release.wait(WAIT)
        real_apply(session, operation, chunk)

    monkeypatch.setattr(runner, "apply", apply)
    with application.test_client() as client:
        operation_id = start_scheduling(client, key, post_ids)
        assert in_chunk.wait(WAIT), "the worker did not reach its third chunk"

        answer = {}

        def cancel():
            with application.test_client() as other:
                answer["response"] = other.post(f"/api/v1/bulk/{operation_id}/cancel", headers=key.headers)

        canceller = threading.Thread(target=cancel)
        canceller.start()
        # The chunk goes on once the cancel is waiting for the operation. That it
        # waited for the chunk is shown by its answer: the chunk is counted.
        wait_until(lambda: runner.cancels.is_waiting(operation_id), "the cancel did not reach the operation")
        release.set()
        canceller.join(WAIT)
        cancelled = answer["response"]
        assert cancelled.status_code == 200, cancelled.text
        assert (cancelled.json()["data"]["status"], cancelled.json()["data"]["processed"]) == ("cancelled", 3 * CHUNK)

        runtime.queue.drain(timeout=WAIT)
        assert_stopped_after(runtime, client, key, operation_id, post_ids, 3 * CHUNK)
