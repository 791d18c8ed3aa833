"""A rate-limit Redis that stops answering does not hold requests. Frozen with
SIGSTOP, it still accepts connections and never replies: without deadlines every
/api/v1 request waited on it. Now each request answers within the limiter's
deadlines, counted in process memory; the outage is logged once, not per request;
Redis is used again once it answers (tried at most every
rate_limit_redis_retry_seconds); a Redis that is killed outright is a second
outage, logged once more. The Redis is the test's own (tests/faults/conftest.py)."""
from __future__ import annotations

import logging
import time

import pytest

from socialpub.config import Settings
from tests.support.factories import make_key
from tests.support.ratelimit import limit_headers

DEADLINE = 2.0  # seconds any request may take, outage or not
RETRY_SECONDS = 0.3
PATH = "/api/v1/nothing-here"  # metered, answered without the database: 404


@pytest.fixture
def outage_app(app_on_private_redis):
    return app_on_private_redis(queue_backend="inline", rate_limit_redis_retry_seconds=RETRY_SECONDS)


def counted_in_redis(redis) -> int:
    """Requests the limiter recorded in Redis (every window of every caller)."""
    return sum(redis.llen(name) for name in redis.scan_iter(match="LIMITS:*"))


def outage_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "socialpub.ratelimit" and "unreachable" in r.getMessage()]


def back_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "socialpub.ratelimit" and "reachable again" in r.getMessage()]


def test_a_frozen_then_killed_redis_never_holds_a_request(outage_app, session, workspace, private_redis, caplog):
    caplog.set_level(logging.INFO, logger="socialpub.ratelimit")
    key = make_key(session, workspace)
    # A thread per request, so that a request that hangs fails the test, not the run.
    with private_redis.calls_let_go(outage_app, threads=4) as (client, pool):
        watcher = private_redis.client()

        def request():
            started = time.monotonic()
            response = pool.submit(client.get, PATH, headers=key.headers).result(timeout=DEADLINE)
            elapsed = time.monotonic() - started
            assert response.status_code == 404, response.text
            assert response.json()["error"]["code"] == "resource_not_found"
            assert limit_headers(response)[0] > 0
            return elapsed

        request()
        assert counted_in_redis(watcher) == 2  # the minute and the day window
        watcher.close()

        private_redis.freeze()
        elapsed = [request() for _ in range(10)]
        assert max(elapsed) < DEADLINE
        # The first request waits out the deadline; the rest do not ask Redis at all.
        assert sorted(elapsed)[-2] < 0.2, elapsed
        assert len(outage_lines(caplog)) == 1

        private_redis.thaw()
        deadline = time.monotonic() + 10
        while not back_lines(caplog):
            assert time.monotonic() < deadline, "the limiter did not go back to Redis"
            request()
            time.sleep(0.05)
        # Counted in Redis again: one request, one entry in each of its two windows.
        watcher = private_redis.client()
        before = counted_in_redis(watcher)
        request()
        assert counted_in_redis(watcher) == before + 2
        assert len(back_lines(caplog)) == 1
        assert len(outage_lines(caplog)) == 1

        private_redis.kill()
        elapsed = [request() for _ in range(10)]
        assert max(elapsed) < DEADLINE
        assert len(outage_lines(caplog)) == 2


def test_the_deadlines_are_settings(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_RATE_LIMIT_REDIS_CONNECT_TIMEOUT_SECONDS", "0.2")
    monkeypatch.setenv("SOCIALPUB_RATE_LIMIT_REDIS_TIMEOUT_SECONDS", "0.3")
    monkeypatch.setenv("SOCIALPUB_RATE_LIMIT_REDIS_RETRY_SECONDS", "7")
    settings = Settings.from_env()
    assert (
        settings.rate_limit_redis_connect_timeout_seconds,
        settings.rate_limit_redis_timeout_seconds,
        settings.rate_limit_redis_retry_seconds,
    ) == (0.2, 0.3, 7.0)
    defaults = Settings()
    # Together under 100 ms: a request falls back to memory within that.
    assert defaults.rate_limit_redis_connect_timeout_seconds + defaults.rate_limit_redis_timeout_seconds <= 0.1
