"""An Idempotency-Key request's change and its stored answer commit together, before
the answer leaves: a repeat sent the moment the answer arrived replays it, and an
answer that could not be stored leaves nothing changed. Against a database of its
own with real commits (the suite's one outer transaction would hide them)."""
from __future__ import annotations

import asyncio
import datetime as dt

import httpx
import pytest
from sqlalchemy import func, select

from persistence.bulk import BulkOperation
from persistence.db import Database
from persistence.idempotency import IdempotencyRecord
from persistence.posts import Post
from socialpub.app import create_app
from socialpub.idempotency import service as idempotency
from socialpub.keys import service as api_keys
from socialpub.scopes import ALL_SCOPES
from socialpub.workspaces import service as workspaces
from tests.support.databases import committed_database_url
from tests.support.factories import OPERATOR
from tests.support.jobs import HeldQueue
from tests.support.settings import test_settings


@pytest.fixture
def committed(tmp_path):
    with committed_database_url(tmp_path) as url:
        database = Database(url)
        with database.transaction() as session:
            workspace = workspaces.create_workspace(session=session, name="One commit", plan="business")
            _, value = api_keys.create_api_key(
                session=session, actor=OPERATOR, workspace_id=workspace.id, name="k", scopes=list(ALL_SCOPES),
                mode="test",
            )
        app = create_app(test_settings(url), database=database)
        runtime = app.app.extensions["socialpub"]
        runtime.queue.close()
        runtime.queue = HeldQueue()
        yield app, database, {"Authorization": f"Bearer {value}"}
        database.dispose()


def _count(database, model, *criteria) -> int:
    """Read on a connection of its own: only what was committed."""
    with database.engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(model).where(*criteria)).scalar_one()


def _post(app, headers, body, *, spy=None):
    async def send():
        async def application(scope, receive, asgi_send):
            async def watched(message):
                if spy is not None and message["type"] == "http.response.start":
                    spy()
                await asgi_send(message)

            await app(scope, receive, watched)

        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.post("/api/v1/posts", headers=headers, json=body)

    return asyncio.run(send())


def test_the_answer_is_stored_before_it_leaves(committed):
    app, database, headers = committed
    seen = []
    response = _post(app, {**headers, "Idempotency-Key": "one"}, {"content": "Hi", "platforms": ["twitter"]},
                     spy=lambda: seen.append((
                         _count(database, Post),
                         _count(database, IdempotencyRecord, IdempotencyRecord.status == "completed"),
                     )))
    assert response.status_code == 201
    # When the answer started to leave, the post and its stored answer were committed.
    assert seen == [(1, 1)]
    repeat = _post(app, {**headers, "Idempotency-Key": "one"}, {"content": "Hi", "platforms": ["twitter"]})
    assert repeat.headers["idempotent-replayed"] == "true" and repeat.json() == response.json()
    assert _count(database, Post) == 1


def test_an_answer_that_cannot_be_stored_leaves_nothing_changed(committed, monkeypatch):
    app, database, headers = committed

    def refuse(*_args, **_kwargs):
        raise RuntimeError("the answer could not be stored")

    monkeypatch.setattr(idempotency, "complete", refuse)
    response = _post(app, {**headers, "Idempotency-Key": "two"}, {"content": "Hi", "platforms": ["twitter"]})
    assert response.status_code == 500
    assert _count(database, Post) == 0
    # The key is free again: the request can be sent once more.
    assert _count(database, IdempotencyRecord) == 0


def test_a_request_without_a_key_commits_as_it_goes(committed):
    app, database, headers = committed
    later = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat()
    response = _post(app, headers, {"content": "Hi", "platforms": ["twitter"], "scheduledAt": later})
    assert response.status_code == 201 and _count(database, Post) == 1


def test_jobs_wait_for_the_commit(committed):
    """A bulk operation's run is queued only once the operation is committed: a job
    that ran first would not find it."""
    app, database, headers = committed
    runtime = app.app.extensions["socialpub"]
    _post(app, headers, {"content": "Hi", "platforms": ["twitter"]})
    with database.engine.connect() as connection:
        post_id = str(connection.execute(select(Post.id)).scalar_one())
    queued_with = []
    real_enqueue = runtime.queue.enqueue

    def enqueue(function, *args, **kwargs):
        queued_with.append(_count(database, BulkOperation))
        return real_enqueue(function, *args, **kwargs)

    runtime.queue.enqueue = enqueue

    async def send():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.post("/api/v1/bulk", headers={**headers, "Idempotency-Key": "bulk"},
                                     json={"action": "archive", "postIds": [post_id]})

    response = asyncio.run(send())
    assert response.status_code == 202, response.text
    assert queued_with == [1], "queued after the operation was committed"
    runtime.queue.drain()
    assert _count(database, BulkOperation, BulkOperation.status == "completed") == 1
