"""A sign-in limiter Redis that stops answering does not hold a dashboard sign-in.
Frozen with SIGSTOP, it accepts connections and never replies: the limiter's calls
give up within the rate limiter's deadlines, count in process memory (the outage
logged once), and go back to Redis once it answers. The Redis is the test's own
(tests/faults/conftest.py)."""
from __future__ import annotations

import logging
import time
import uuid

import pytest

from tests.support.dashboard import Browser, make_member

DEADLINE = 2.0  # seconds a sign-in may take, outage or not
RETRY_SECONDS = 0.3


@pytest.fixture
def outage_app(app_on_private_redis):
    return app_on_private_redis(queue_backend="inline", rate_limit_redis_retry_seconds=RETRY_SECONDS)


def limiter_lines(caplog, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "socialpub.dashboard" and words in r.getMessage()]


def counted_in_redis(redis) -> int:
    return sum(redis.llen(name) for name in redis.scan_iter(match="LIMITS:*sign-in*"))


def test_a_frozen_redis_does_not_hold_a_sign_in(outage_app, session, workspace, private_redis, caplog):
    caplog.set_level(logging.INFO, logger="socialpub.dashboard")
    member = make_member(session, workspace)
    with private_redis.calls_let_go() as (_, pool):
        address = f"10.9.{uuid.uuid4().int % 250}.1"

        def sign_in() -> float:
            # A browser of its own each time: a signed-in one is not asked to sign in again.
            with outage_app.test_client(client=(address, 50000)) as client:
                browser = Browser(client)
                browser.get("/dashboard/sign-in")
                response, elapsed = private_redis.answer_within(pool, DEADLINE, "a sign-in", browser.sign_in, member.email)
            assert response.status_code == 302, response.text
            return elapsed

        sign_in()
        # A failure stays counted (a sign-in that succeeds takes its attempt back).
        with outage_app.test_client(client=(address, 50000)) as client:
            assert Browser(client).sign_in(member.email, "wrong password!!").status_code == 401
        watcher = private_redis.client()
        assert counted_in_redis(watcher) > 0  # counted in Redis while it answers
        watcher.close()

        private_redis.freeze()
        elapsed = [sign_in() for _ in range(3)]
        assert max(elapsed) < DEADLINE
        # Only the first waits out the deadlines; the others do not ask Redis at all.
        assert sorted(elapsed)[-2] < 0.5, elapsed
        assert len(limiter_lines(caplog, "unreachable")) == 1

        private_redis.thaw()
        deadline = time.monotonic() + 10
        while not limiter_lines(caplog, "reachable again"):
            assert time.monotonic() < deadline, "the sign-in limiter did not go back to Redis"
            sign_in()
            time.sleep(0.05)
        assert len(limiter_lines(caplog, "unreachable")) == 1
