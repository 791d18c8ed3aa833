"""GET /bulk, GET /bulk/{operationId}, POST /bulk/{operationId}/cancel, and how a run
that stopped part-way is taken over: progress committed per chunk, no item applied
twice, and an operation whose runs keep dying failed rather than retried for ever."""
import datetime as dt
import uuid

from sqlalchemy import func, select

from persistence.bulk import BulkOperation
from persistence.events import Event
from persistence.types import utcnow
from socialpub.bulk import runner
from socialpub.bulk.jobs import run_bulk_operation
from tests.support.bulk import URL, later, new_post, operation, post_of, started
from tests.support.factories import make_bulk_operation, make_key, make_workspace


def run_one_chunk(app, db, operation_id, token="first-run") -> str:
    settings = app.app.extensions["socialpub"].settings
    return runner.run_chunk(database=db, settings=settings, operation_id=operation_id, token=token)


def sweep(db, runtime, **now) -> int:
    return runner.resume_stalled(
        database=db, queue=runtime.queue, settings=runtime.settings, run=run_bulk_operation, **now
    )


def scheduled_events(session) -> dict:
    session.expire_all()
    rows = session.execute(select(Event.data).where(Event.type == "post.scheduled")).scalars()
    counts: dict = {}
    for data in rows:
        counts[data["post"]["id"]] = counts.get(data["post"]["id"], 0) + 1
    return counts


class TestListOperations:
    def test_newest_first_filtered_by_status_and_paginated(self, client, session, workspace, key, jobs):
        first = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
        jobs.run()
        second = started(client, key, action="delete", postIds=[str(uuid.uuid4())])
        make_bulk_operation(session, make_workspace(session, name="Other Co"))
        make_bulk_operation(session, workspace, livemode=True)
        listed = client.get(URL, headers=key.headers).json()
        assert [o["id"] for o in listed["data"]] == [second["id"], first["id"]]
        assert listed["pagination"]["totalItems"] == 2
        completed = client.get(f"{URL}?status=completed", headers=key.headers).json()["data"]
        assert [o["id"] for o in completed] == [first["id"]]
        assert [e["code"] for e in completed[0]["errors"]] == ["resource_not_found"]
        page = client.get(f"{URL}?limit=1&offset=1", headers=key.headers).json()
        assert [o["id"] for o in page["data"]] == [first["id"]] and page["pagination"]["hasNextPage"] is False

    def test_an_unknown_status_is_422(self, client, key):
        response = client.get(f"{URL}?status=exploded", headers=key.headers)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "validation_error"


class TestGetOperation:
    def test_progress_is_committed_per_chunk(self, app, db, client, key, jobs):
        size = app.app.extensions["socialpub"].settings.bulk_chunk_size
        posts = [new_post(client, key) for _ in range(size + 3)]
        data = started(client, key, action="archive", postIds=posts)
        assert run_one_chunk(app, db, data["id"]) == "continue"
        partway = operation(client, key, data["id"])
        assert partway["status"] == "running" and partway["startedAt"]
        assert (partway["processed"], partway["succeeded"]) == (size, size)
        assert post_of(client, key, posts[size]).json()["data"]["archivedAt"] is None
        # The last chunk completes the operation in its own transaction.
        assert run_one_chunk(app, db, data["id"]) == "completed"
        jobs.run()  # the run queued with the request finds the operation finished
        done = operation(client, key, data["id"])
        assert (done["status"], done["processed"], done["succeeded"]) == ("completed", size + 3, size + 3)

    def test_unknown_is_404(self, client, key):
        response = client.get(f"{URL}/{uuid.uuid4()}", headers=key.headers)
        assert response.status_code == 404 and response.json()["error"]["code"] == "resource_not_found"


class TestCancelOperation:
    def test_a_pending_operation_is_cancelled_before_anything_happens(self, client, session, key, jobs):
        post_id = new_post(client, key)
        data = started(client, key, action="delete", postIds=[post_id])
        response = client.post(f"{URL}/{data['id']}/cancel", headers=key.headers)
        assert response.status_code == 200, response.text
        cancelled = response.json()["data"]
        assert cancelled["status"] == "cancelled" and cancelled["processed"] == 0 and cancelled["completedAt"]
        jobs.run()
        assert operation(client, key, data["id"])["status"] == "cancelled"
        assert post_of(client, key, post_id).status_code == 200, "a cancelled operation deletes nothing"

    def test_cancelling_midway_stops_before_the_next_item_and_keeps_what_was_done(self, app, db, client, session, key, jobs):
        size = app.app.extensions["socialpub"].settings.bulk_chunk_size
        posts = [new_post(client, key) for _ in range(size + 5)]
        data = started(client, key, action="schedule", postIds=posts, scheduledAt=later(days=1))
        run_one_chunk(app, db, data["id"])
        cancelled = client.post(f"{URL}/{data['id']}/cancel", headers=key.headers).json()["data"]
        assert (cancelled["status"], cancelled["processed"]) == ("cancelled", size)
        jobs.run()
        after = operation(client, key, data["id"])
        assert (after["status"], after["processed"], after["succeeded"]) == ("cancelled", size, size)
        statuses = [post_of(client, key, p).json()["data"]["status"] for p in posts]
        assert statuses == ["scheduled"] * size + ["draft"] * 5
        events = [e for e in self._completed_events(session) if e.data["bulkOperation"]["id"] == data["id"]]
        assert [e.data["bulkOperation"]["status"] for e in events] == ["cancelled"]

    def test_a_finished_operation_cannot_be_cancelled(self, client, key, jobs):
        data = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
        jobs.run()
        response = client.post(f"{URL}/{data['id']}/cancel", headers=key.headers)
        assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
        assert operation(client, key, data["id"])["status"] == "completed"

    def test_a_cancelled_operation_cannot_be_cancelled_again(self, client, key):
        data = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
        assert client.post(f"{URL}/{data['id']}/cancel", headers=key.headers).status_code == 200
        assert client.post(f"{URL}/{data['id']}/cancel", headers=key.headers).status_code == 409

    @staticmethod
    def _completed_events(session):
        session.expire_all()
        return list(session.execute(select(Event).where(Event.type == "bulk.completed")).scalars())


class TestLostRuns:
    def test_a_run_that_died_is_taken_over_after_its_lease_and_nothing_is_done_twice(self, app, db, client, session, key, jobs):
        runtime = app.app.extensions["socialpub"]
        size = runtime.settings.bulk_chunk_size
        posts = [new_post(client, key) for _ in range(size * 2 + 1)]
        data = started(client, key, action="schedule", postIds=posts, scheduledAt=later(days=1))
        jobs.forget()  # the queued run is lost...
        run_one_chunk(app, db, data["id"], token="dead-run")  # ... and this one dies after a chunk
        # While its lease lasts, another run leaves the operation to it.
        assert runner.run_operation(database=db, settings=runtime.settings, operation_id=data["id"]) == "busy"
        assert sweep(db, runtime) == 0
        later_on = utcnow() + dt.timedelta(seconds=runtime.settings.bulk_lease_seconds + 1)
        assert sweep(db, runtime, now=later_on) == 1
        jobs.run()
        done = operation(client, key, data["id"])
        assert (done["status"], done["processed"], done["succeeded"]) == ("completed", len(posts), len(posts))
        assert scheduled_events(session) == {post_id: 1 for post_id in posts}, "each post scheduled exactly once"
        session.expire_all()
        assert session.get(BulkOperation, uuid.UUID(data["id"])).runs == 1

    def test_an_operation_whose_runs_keep_dying_fails_and_names_what_was_not_done(self, app, db, client, session, key):
        runtime = app.app.extensions["socialpub"]
        settings = runtime.settings.replace(bulk_chunk_size=1, bulk_max_runs=2)
        posts = [new_post(client, key) for _ in range(5)]
        data = started(client, key, action="archive", postIds=posts)
        for attempt in range(3):
            assert runner.run_chunk(database=db, settings=settings, operation_id=data["id"], token=f"run-{attempt}") == "continue"
            session.execute(
                BulkOperation.__table__.update().where(BulkOperation.id == uuid.UUID(data["id"]))
                .values(lease_until=utcnow() - dt.timedelta(seconds=1))
            )
            session.commit()
        assert runner.run_chunk(database=db, settings=settings, operation_id=data["id"], token="run-3") == "failed"
        failed = operation(client, key, data["id"])
        assert (failed["status"], failed["processed"], failed["succeeded"], failed["failed"]) == ("failed", 5, 3, 2)
        assert [(e["postId"], e["code"]) for e in failed["errors"]] == [(posts[3], "internal_error"), (posts[4], "internal_error")]
        assert post_of(client, key, posts[4]).json()["data"]["archivedAt"] is None

    def test_the_sweeper_queues_an_operation_the_queue_never_got(self, app, db, client, session, key, jobs):
        runtime = app.app.extensions["socialpub"]
        data = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
        session.execute(
            BulkOperation.__table__.update().where(BulkOperation.id == uuid.UUID(data["id"])).values(lease_until=None)
        )
        session.commit()
        assert sweep(db, runtime) == 1
        assert sweep(db, runtime) == 0, "queued once per lease"
        jobs.run()
        assert operation(client, key, data["id"])["status"] == "completed"

    def test_an_operation_the_queue_refused_is_queued_by_the_next_sweep(self, app, db, client, key, jobs, monkeypatch):
        runtime = app.app.extensions["socialpub"]

        def refuse(*_args, **_kwargs):
            raise ConnectionError("queue down")

        with monkeypatch.context() as patched:
            patched.setattr(runtime.queue, "enqueue", refuse)
            data = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
            assert jobs.held() == 0
            # Still down at the sweep: its lease is cleared again, not kept for a lease.
            assert sweep(db, runtime) == 0
        assert sweep(db, runtime) == 1, "the lease the refusal cleared does not hold it back"
        jobs.run()
        assert operation(client, key, data["id"])["status"] == "completed"


class TestAnotherKeysOperations:
    def test_a_key_of_the_same_workspace_and_mode_sees_them(self, client, session, workspace, key):
        data = started(client, key, action="archive", postIds=[str(uuid.uuid4())])
        colleague = make_key(session, workspace, scopes=["posts:read"])
        assert operation(client, colleague, data["id"])["id"] == data["id"]
        count = session.execute(select(func.count()).select_from(BulkOperation)).scalar_one()
        assert count == 1
