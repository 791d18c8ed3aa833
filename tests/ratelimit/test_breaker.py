"""When the limiters' Redis counts as down: a circuit breaker, not one late answer.

Reported: under load one Redis answer past the 50 ms deadline sent a process to count
in its own memory for `rate_limit_redis_retry_seconds`, each process with windows of
its own, so a key's limits loosened to one per process. Now a call's answer is waited
for in steps (the deadline, then twice, four times as long again); a late answer is
used and counted once; only `rate_limit_redis_failures` failures in a row, with no
answer in between, trip the breaker; then one request tries Redis again every
`rate_limit_redis_retry_seconds`. The API's limiter and the dashboard's sign-in
limiter share the machinery.

The breaker alone on a fake clock; then both limiters against a Redis of the test's
own whose answers a proxy makes late (tests/ratelimit/late_redis.py). The API's
limiter is asked both ways it is asked: waiting on a thread (`hit`) and on an event
loop (`hit_async`, the API gate's way, where the loop, not a thread, waits)."""
from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from socialpub import clock
from socialpub.config import Settings
from socialpub.dashboard.auth import SignInLimiter
from socialpub.principal import Principal
from socialpub.ratelimit import MemoryCounters, RateLimiter
from socialpub.ratelimit_fallback import CircuitBreaker, SharedStorageFallback
from tests.ratelimit.late_redis import LateRedis

DEADLINE = 0.05
RETRY_SECONDS = 5.0


def caller(per_minute: int) -> Principal:
    return Principal(
        api_key_id=uuid.uuid4(), workspace_id=uuid.uuid4(), livemode=False, scopes=frozenset({"posts:read"}),
        plan="business", per_minute=per_minute, per_day=None, valid_until=None,
    )


class Calls:
    """What a breaker said: trips and recoveries."""

    def __init__(self):
        self.tripped: list[str] = []
        self.recovered = 0

    def breaker(self, failures: int = 3) -> CircuitBreaker:
        def recovered():
            self.recovered += 1

        return CircuitBreaker(
            failures=failures, deadline=DEADLINE, retry_seconds=RETRY_SECONDS, tripped=self.tripped.append, recovered=recovered
        )


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


class TestTheBreaker:
    def test_a_call_waits_in_doubling_steps(self):
        breaker = Calls().breaker()
        assert breaker.steps == (0.05, 0.1, 0.2)
        assert breaker.waited(2) == pytest.approx(0.35)

    def test_a_step_missed_then_an_answer_does_not_trip(self, fake_clock):
        calls = Calls()
        breaker = calls.breaker()
        for _ in range(10):
            assert breaker.missed(0)  # wait on
            breaker.answered()
        assert breaker.missed(0) and breaker.missed(1)
        breaker.answered()
        assert not breaker.tripped and calls.tripped == [] and calls.recovered == 0
        assert breaker.admits()

    def test_calls_waiting_together_count_once(self, fake_clock):
        calls = Calls()
        breaker = calls.breaker()
        # Fifty calls slowed by one busy moment: one failure, not fifty.
        assert all(breaker.missed(0) for _ in range(50))
        assert all(breaker.missed(1) for _ in range(50))
        assert not breaker.tripped
        breaker.answered()
        assert all(breaker.missed(0) for _ in range(50))
        assert not breaker.tripped

    def test_failures_in_a_row_trip_it(self, fake_clock):
        calls = Calls()
        breaker = calls.breaker()
        assert breaker.missed(0) and breaker.missed(1)
        assert not breaker.missed(2)  # the third: given up, and tripped
        assert breaker.tripped and len(calls.tripped) == 1
        assert calls.tripped[0].startswith("3 failures in a row, the last: no answer within 0.35 s")
        assert not breaker.admits()

    def test_calls_failing_outright_count_one_each(self, fake_clock):
        calls = Calls()
        breaker = calls.breaker()
        error = RedisConnectionError("Connection refused")
        assert breaker.failed(error) and breaker.failed(error)
        assert not breaker.failed(error)
        assert breaker.tripped and calls.tripped == ["3 failures in a row, the last: ConnectionError: Connection refused"]

    def test_an_answer_ends_the_run(self, fake_clock):
        breaker = Calls().breaker()
        assert breaker.missed(0) and breaker.missed(1)
        breaker.answered()
        # A call that began before the answer misses its last step: one failure, not three.
        assert not breaker.missed(2)  # no step left for it
        assert not breaker.tripped
        assert breaker.failed(RedisConnectionError("reset")) is True  # the run is two long
        assert not breaker.failed(RedisConnectionError("reset"))
        assert breaker.tripped

    def test_one_probe_after_the_retry_interval(self, fake_clock):
        calls = Calls()
        breaker = calls.breaker()
        for _ in range(3):
            breaker.failed(RedisConnectionError("refused"))
        assert not breaker.admits()
        fake_clock.advance(RETRY_SECONDS / 2)
        assert not breaker.admits()
        fake_clock.advance(RETRY_SECONDS / 2)
        assert breaker.admits()  # this call probes
        assert not breaker.admits()  # the others count in memory meanwhile
        # The probe gets one step: missed, the breaker stays tripped (not announced again).
        assert not breaker.missed(0)
        assert breaker.tripped and len(calls.tripped) == 1
        fake_clock.advance(RETRY_SECONDS)
        assert breaker.admits()
        breaker.answered()
        assert not breaker.tripped and calls.recovered == 1
        assert breaker.admits() and breaker.admits()

    def test_one_failure_trips_when_so_set(self, fake_clock):
        breaker = Calls().breaker(failures=1)
        assert breaker.steps == (0.05,)
        assert not breaker.missed(0)
        assert breaker.tripped


class FlakyStorage:
    """Shared counters that fail outright the first `failures` calls."""

    def __init__(self, failures: int):
        self.left = failures
        self.calls = 0
        self.failures = 3  # the option RedisCounters has from the settings
        self.deadline = DEADLINE

    def hit(self):
        self.calls += 1
        if self.left:
            self.left -= 1
            raise RedisConnectionError("Connection reset by peer")
        return "shared"


class TestFallback:
    def fallback(self, shared):
        local = MemoryCounters()
        local.hit = lambda: "local"
        return SharedStorageFallback(shared=shared, local=local, retry_seconds=RETRY_SECONDS, name="test")

    def test_a_call_that_failed_outright_is_tried_again(self, fake_clock, caplog):
        shared = FlakyStorage(failures=2)
        fallback = self.fallback(shared)
        with caplog.at_level(logging.WARNING, logger="socialpub.ratelimit"):
            assert fallback.run(lambda counters: counters.hit()) == "shared"
        assert shared.calls == 3 and not fallback.breaker.tripped
        assert not caplog.records

    def test_failures_in_a_row_count_in_memory_said_once(self, fake_clock, caplog):
        shared = FlakyStorage(failures=1000)
        fallback = self.fallback(shared)
        with caplog.at_level(logging.WARNING, logger="socialpub.ratelimit"):
            results = [fallback.run(lambda counters: counters.hit()) for _ in range(5)]
        assert results == ["local"] * 5
        assert shared.calls == 3  # the first request's three tries; the others do not ask
        assert [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()] == [
            "test storage unreachable (3 failures in a row, the last: ConnectionError: Connection reset by peer);"
            " counting in process memory, trying Redis again every 5.0s",
        ]


@pytest.fixture
def late_redis(tmp_path):
    redis = LateRedis(tmp_path / "redis.log")
    try:
        yield redis
    finally:
        redis.close()


@pytest.fixture(params=["on a thread", "on an event loop"])
def hit(request):
    """`hit(limiter, identity, windows)`: the limiter's decision, asked on the calling
    thread or awaited on one event loop that every call shares (as a server
    process's requests share theirs)."""
    if request.param == "on a thread":
        yield lambda limiter, identity, windows: limiter.hit(identity, windows)
        return
    loop = asyncio.new_event_loop()
    running = threading.Thread(target=loop.run_forever, daemon=True)
    running.start()

    def on_loop(limiter, identity, windows):
        return asyncio.run_coroutine_threadsafe(limiter.hit_async(identity, windows), loop).result(timeout=30)

    try:
        yield on_loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        running.join(timeout=10)
        loop.close()


def limiter_on(redis: LateRedis, deadline: float = DEADLINE) -> RateLimiter:
    return RateLimiter(Settings(
        redis_url=redis.url, rate_limit_redis_timeout_seconds=deadline, rate_limit_redis_retry_seconds=RETRY_SECONDS,
    ))


def outage_lines(caplog, logger="socialpub.ratelimit") -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and "unreachable" in r.getMessage()]


class TestLateAnswers:
    def test_one_late_answer_is_waited_for_and_counted_once(self, hit, late_redis, caplog):
        # Failed before the breaker: the late answer sent the process to its memory,
        # where the key's window was empty (remaining 2, then 1: four requests let in).
        limiter = limiter_on(late_redis)
        identity, windows = limiter.windows_for(caller(per_minute=3))
        caplog.set_level(logging.INFO, logger="socialpub.ratelimit")
        first = hit(limiter, identity, windows)
        late_redis.late(0.12)  # past the first step (0.05 s), within the second
        started = time.monotonic()
        late = hit(limiter, identity, windows)
        waited = time.monotonic() - started
        rest = [hit(limiter, identity, windows) for _ in range(3)]
        decisions = [first, late, *rest]
        assert waited >= 0.1
        assert [d.allowed for d in decisions] == [True, True, True, False, False]
        assert [d.remaining for d in decisions] == [2, 1, 0, 0, 0]
        assert late_redis.counted() == 2 * 3  # three requests let in, each in its minute and day window, once
        assert outage_lines(caplog) == [] and not limiter._counters.breaker.tripped

    def test_answers_late_for_a_busy_moment_do_not_loosen_the_limit(self, hit, late_redis, caplog):
        # Forty requests of one key at once, their answers late by 1-3 steps' worth
        # (as on a machine too busy to deliver them): exactly the limit passes.
        limiter = limiter_on(late_redis)
        identity, windows = limiter.windows_for(caller(per_minute=15))
        hit(limiter, identity, windows)
        late_redis.late(0.08, answers=40)
        barrier = threading.Barrier(40)

        def one(_):
            barrier.wait()
            return hit(limiter, identity, windows)

        with caplog.at_level(logging.WARNING, logger="socialpub.ratelimit"), ThreadPoolExecutor(40) as pool:
            decisions = list(pool.map(one, range(40)))
        assert sum(d.allowed for d in decisions) == 14
        assert sorted(d.remaining for d in decisions if d.allowed) == list(range(14))
        assert outage_lines(caplog) == [] and not limiter._counters.breaker.tripped

    def test_a_frozen_redis_trips_it_and_a_probe_brings_it_back(self, hit, late_redis, caplog, fake_clock):
        limiter = limiter_on(late_redis)
        identity, windows = limiter.windows_for(caller(per_minute=50))
        caplog.set_level(logging.INFO, logger="socialpub.ratelimit")
        hit(limiter, identity, windows)
        assert late_redis.counted() == 2

        late_redis.freeze()
        started = time.monotonic()
        hit(limiter, identity, windows)
        first = time.monotonic() - started
        # Waited through the three steps (0.05 + 0.1 + 0.2 s), then counted in memory.
        assert 0.3 <= first < 1.0, first
        assert limiter._counters.breaker.tripped and len(outage_lines(caplog)) == 1
        timings = []
        for _ in range(5):
            started = time.monotonic()
            decision = hit(limiter, identity, windows)
            timings.append(time.monotonic() - started)
        assert max(timings) < 0.2, timings  # Redis is not asked (counted below)
        assert decision.remaining == 50 - 6  # the process's own count: six requests
        late_redis.thaw()
        counted = late_redis.counted()  # the call given up on reached Redis: 2 more

        hit(limiter, identity, windows)
        assert late_redis.counted() == counted  # not tried again before the retry interval
        fake_clock.advance(RETRY_SECONDS)
        hit(limiter, identity, windows)  # the probe
        assert late_redis.counted() == counted + 2
        assert not limiter._counters.breaker.tripped
        assert [r.getMessage() for r in caplog.records if "reachable again" in r.getMessage()] == [
            "rate-limit storage reachable again; counting in Redis"
        ]
        hit(limiter, identity, windows)
        assert late_redis.counted() == counted + 4
        assert len(outage_lines(caplog)) == 1

    def test_a_probe_of_a_redis_still_frozen_waits_one_step(self, hit, late_redis, caplog, fake_clock):
        step = 0.2  # steps of 0.2, 0.4 and 0.8 s: one is told from two on a busy machine too
        limiter = limiter_on(late_redis, deadline=step)
        identity, windows = limiter.windows_for(caller(per_minute=50))
        caplog.set_level(logging.INFO, logger="socialpub.ratelimit")
        hit(limiter, identity, windows)
        late_redis.freeze()
        hit(limiter, identity, windows)  # trips it
        fake_clock.advance(RETRY_SECONDS)
        started = time.monotonic()
        hit(limiter, identity, windows)  # the probe: a new connection, whose handshake gets no answer
        probe = time.monotonic() - started
        assert step <= probe < 3 * step, probe
        assert limiter._counters.breaker.tripped and len(outage_lines(caplog)) == 1
        started = time.monotonic()
        hit(limiter, identity, windows)
        assert time.monotonic() - started < step  # not asked again before the next interval

    def test_the_sign_in_limiter_waits_for_a_late_answer_too(self, late_redis, caplog):
        limiter = SignInLimiter(Settings(
            redis_url=late_redis.url, rate_limit_redis_timeout_seconds=DEADLINE, sign_in_attempts_per_email=3,
        ))
        caplog.set_level(logging.INFO, logger="socialpub.dashboard")
        limiter.attempt("member@example.com", "10.0.0.1")
        late_redis.late(0.12)
        attempts = [limiter.attempt("member@example.com", "10.0.0.1") for _ in range(3)]
        assert [a.refused for a in attempts] == [False, False, True]
        # Three windows of two attempts each: every attempt counted in Redis.
        assert late_redis.counted() == 3 * 3
        assert outage_lines(caplog, "socialpub.dashboard") == [] and not limiter._counters.breaker.tripped

    def test_the_sign_in_limiter_trips_on_a_frozen_redis(self, late_redis, caplog):
        limiter = SignInLimiter(Settings(redis_url=late_redis.url, rate_limit_redis_timeout_seconds=DEADLINE))
        caplog.set_level(logging.INFO, logger="socialpub.dashboard")
        limiter.attempt("member@example.com", "10.0.0.1")
        late_redis.freeze()
        started = time.monotonic()
        attempt = limiter.attempt("member@example.com", "10.0.0.1")
        assert time.monotonic() - started < 1.0
        assert not attempt.refused
        assert limiter._counters.breaker.tripped and len(outage_lines(caplog, "socialpub.dashboard")) == 1
