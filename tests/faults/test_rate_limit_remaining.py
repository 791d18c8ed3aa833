"""Concurrent requests of one key each get their own X-RateLimit-Remaining: the
count comes from the same atomic step as the hit. Read separately, requests saw each
other's hits (three 200s said 0 remaining, later ones 14). In process memory, and in
Redis when TEST_REDIS_URL is set (under CI=true a missing Redis fails)."""
from __future__ import annotations

import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from socialpub.app import create_app
from socialpub.config import Settings
from socialpub.principal import Principal
from socialpub.ratelimit import RateLimiter
from tests.support import backends
from tests.support.factories import make_key
from tests.support.ratelimit import (
    forget_counters,
    limit_headers,
    redis_url_for_db,
    unique_address,
)
from tests.support.settings import test_settings
from workers import context as job_context

PER_MINUTE = 15
CALLERS = 40


def caller(per_minute=PER_MINUTE, per_day=None) -> Principal:
    return Principal(
        api_key_id=uuid.uuid4(), workspace_id=uuid.uuid4(), livemode=False, scopes=frozenset({"posts:read"}),
        plan="business", per_minute=per_minute, per_day=per_day, valid_until=None,
    )


@pytest.fixture(params=["memory", "redis"])
def storage(request):
    """None: counters in process memory; else the Redis URL (its rate-limit database)."""
    if request.param == "memory":
        return None
    if not backends.redis_url():
        pytest.skip("TEST_REDIS_URL is not set")
    return redis_url_for_db(backends.require_redis())


@pytest.fixture
def busy_switching():
    # Threads switch as often as the interpreter allows, so a hit and a separate read
    # of the window interleave with other threads' hits whenever they can.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def all_at_once(count: int, call) -> list:
    barrier = threading.Barrier(count)

    def one(index):
        barrier.wait()
        return call(index)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def assert_each_remaining_once(pairs, limit: int):
    """(allowed, remaining) of every request: the allowed ones count down
    limit-1 ... 0, each value once; the refused ones say 0."""
    allowed = sorted((remaining for ok, remaining in pairs if ok), reverse=True)
    assert allowed == list(range(limit - 1, -1, -1)), allowed
    assert all(remaining == 0 for ok, remaining in pairs if not ok)


def test_limiter_reports_each_remaining_once(storage, busy_switching):
    limiter = RateLimiter(Settings(redis_url=storage))
    identities = []
    try:
        for _ in range(5):
            principal = caller()
            identity, windows = limiter.windows_for(principal)
            identities.append(identity)
            decisions = all_at_once(CALLERS, lambda _: limiter.hit(identity, windows))
            assert [d.limit for d in decisions] == [PER_MINUTE] * CALLERS
            assert_each_remaining_once([(d.allowed, d.remaining) for d in decisions], PER_MINUTE)
    finally:
        if storage:
            forget_counters(storage, identities)


def test_the_day_window_is_reported_consistently_too(storage, busy_switching):
    # A day window smaller than the minute window is the one reported.
    limiter = RateLimiter(Settings(redis_url=storage))
    identity, windows = limiter.windows_for(caller(per_minute=50, per_day=12))
    try:
        decisions = all_at_once(CALLERS, lambda _: limiter.hit(identity, windows))
        assert_each_remaining_once([(d.allowed, d.remaining) for d in decisions], 12)
        assert {d.refused_by.name for d in decisions if not d.allowed} == {"day"}
    finally:
        if storage:
            forget_counters(storage, [identity])


def test_api_headers_under_concurrent_requests(storage, database_url, db, session, workspace, busy_switching):
    key = make_key(session, workspace, per_minute=PER_MINUTE)
    saved = (job_context._database, job_context._queue, job_context._settings)
    settings = test_settings(database_url, storage, queue_backend="inline", rate_limit_default_per_minute=PER_MINUTE)
    application = create_app(settings, database=db)
    # A path no operation has: metered like any other, answered without the database
    # (the tests' one database connection is not for concurrent use).
    path = "/api/v1/nothing-here"
    try:
        with application.test_client(client=(unique_address(), 50000)) as client:
            # The first request resolves the key (a database read), the rest reuse it.
            first = client.get(path, headers=key.headers)
            responses = all_at_once(CALLERS, lambda _: client.get(path, headers=key.headers))
    finally:
        application.app.extensions["socialpub"].queue.close()
        job_context._database, job_context._queue, job_context._settings = saved
        if storage:
            forget_counters(storage, [f"key:{key.model.id}"])
    assert first.status_code == 404 and limit_headers(first) == (PER_MINUTE, PER_MINUTE - 1)
    assert sorted(r.status_code for r in responses) == [404] * (PER_MINUTE - 1) + [429] * (CALLERS - PER_MINUTE + 1)
    assert_each_remaining_once([(r.status_code == 404, limit_headers(r)[1]) for r in responses], PER_MINUTE - 1)
