"""The API gate counts a request without handing it to a thread when it can: with
Redis, a key already cached is counted on the event loop's own Redis client (the
key revision comes back with the hit), so admission reaches no thread. Only the
database reads go to one: a key not yet cached, and on the embedded default (no
Redis) the key revision of a cached key. Run on both backends: PostgreSQL's run has
Redis, SQLite's has none."""
from __future__ import annotations

import pytest
from redis import Redis

from socialpub import keycache, middleware, security
from tests.support.factories import make_key


@pytest.fixture
def gate_threads(monkeypatch):
    """The functions the gate handed to a thread, by name, as they happen."""
    handed: list[str] = []
    hand_over = middleware.run_in_threadpool

    async def counted(function, *args, **kwargs):
        handed.append(getattr(function, "__name__", repr(function)))
        return await hand_over(function, *args, **kwargs)

    monkeypatch.setattr(middleware, "run_in_threadpool", counted)
    return handed


def test_a_cached_key_is_admitted_on_the_event_loop(app, client, session, workspace, settings, gate_threads):
    runtime = app.app.extensions["socialpub"]
    if settings.redis_url:
        # Redis mirrors the key revision the database holds (earlier tests' rolled-back
        # revocations may have left another there, which would rightly send every
        # cached key back to the database).
        with Redis.from_url(settings.redis_url) as redis:
            redis.set(keycache.REVISION_KEY, security.current_revision(runtime.database))
    key = make_key(session, workspace)
    first = client.get("/api/v1/nothing-here", headers=key.headers)
    assert first.status_code == 404
    assert gate_threads == ["resolve_key"]  # read once, then cached
    gate_threads.clear()

    responses = [client.get("/api/v1/nothing-here", headers=key.headers) for _ in range(3)]
    assert [r.status_code for r in responses] == [404, 404, 404]
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in [first, *responses]]
    assert remaining == sorted(remaining, reverse=True) and len(set(remaining)) == 4  # each one counted
    if runtime.rate_limiter.shares_counters:
        assert gate_threads == []  # Redis answered on the loop, the revision with it
    else:
        assert gate_threads == ["current_revision"] * 3  # the embedded default reads it from the database


def test_a_request_without_a_key_never_reaches_a_thread(client, gate_threads):
    responses = [client.get("/api/v1/posts") for _ in range(2)]
    assert [r.status_code for r in responses] == [401, 401]
    assert gate_threads == []
