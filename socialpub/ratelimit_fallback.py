"""When the shared storage of the rate limiters (Redis: socialpub.ratelimit_redis)
counts as down, and counting in this process's memory meanwhile.

A Redis that does not answer must not hold requests, and one that answers late must
still count them (a process counting in its own memory loosens a key's limits to one
window per process). So a call's answer is waited for step by step: within
`rate_limit_redis_timeout_seconds`, then twice, four times... as long again; each
step missed, and each call that fails outright (cannot connect, connection lost), is
one failure. A late answer is used (counted once, exactly) and ends the run of
failures; `rate_limit_redis_failures` of them in a row, with no answer from Redis in
between, trip the circuit breaker: the process counts in its own memory, says so
once per outage, and lets one request try Redis again every
`rate_limit_redis_retry_seconds`. A frozen Redis holds a request at most the steps'
sum, (2^N - 1) x the deadline (350 ms by default; plus a connect deadline per call
that could not connect), and only until the breaker trips.
"""
from __future__ import annotations

import logging
import math
import threading

from redis.exceptions import TimeoutError as RedisTimeoutError

from socialpub import clock

logger = logging.getLogger("socialpub.ratelimit")


class Unanswered(RedisTimeoutError):
    """A call's answer did not begin within the steps the breaker gave it (already
    counted as failures, step by step)."""


class CircuitBreaker:
    """When a limiter's Redis counts as down.

    A call's answer is waited for in `steps`: the call deadline, then twice, four
    times... as long again, `failures` steps in all. A step missed is a failure; so is
    a call that fails outright. An answer from Redis, late or not, ends a run of
    failures. Calls waiting together count together: a step missed counts only when
    it is as far along as the run already is (step i missed makes the run i + 1 at
    most), so fifty calls slowed by one busy moment are one failure, not fifty. When
    the run reaches `failures` the breaker trips: for `retry_seconds` nothing asks
    Redis, then one call does (a probe, given one step; missed, the breaker stays
    tripped for another `retry_seconds`; answered, it closes)."""

    def __init__(self, *, failures: int, deadline: float, retry_seconds: float, tripped=None, recovered=None):
        self.failures = max(1, int(failures))
        # None: no deadline (a client made without one waits as long as it takes).
        self.steps = tuple(None if deadline is None else deadline * 2**step for step in range(self.failures))
        self.retry_seconds = retry_seconds
        self._tripped = tripped or (lambda reason: None)
        self._recovered = recovered or (lambda: None)
        self._lock = threading.Lock()
        self._run = 0  # failures in a row since Redis last answered
        self._open = False
        self._next_try = 0.0  # clock.monotonic() after which a probe may ask Redis

    @property
    def tripped(self) -> bool:
        return self._open

    def waited(self, step: int) -> float:
        """How long a call has waited once it missed `step`."""
        return math.inf if self.steps[0] is None else sum(self.steps[: step + 1])

    def admits(self) -> bool:
        """Whether a call may ask Redis: the breaker is closed, or this call is the probe."""
        if not self._open:  # read without the lock: the common case stays cheap
            return True
        with self._lock:
            if not self._open:
                return True
            if clock.monotonic() < self._next_try:
                return False
            # This call tries Redis again; the others count in memory meanwhile.
            self._next_try = clock.monotonic() + self.retry_seconds
            return True

    def missed(self, step: int) -> bool:
        """A call's answer has not begun within steps[0..step]. Whether it waits on."""
        return self._failure(step, f"no answer within {self.waited(step):g} s") and step + 1 < len(self.steps)

    def failed(self, error: Exception) -> bool:
        """A call failed outright. Whether Redis may be asked again (the breaker holds)."""
        return self._failure(None, f"{error.__class__.__name__}: {error}")

    def answered(self) -> None:
        if not self._run and not self._open:  # read without the lock: the common case
            return
        with self._lock:
            recovered = self._open
            self._run, self._open = 0, False
        if recovered:
            self._recovered()

    def _failure(self, step: int | None, reason: str) -> bool:
        """Counts one failure (a step missed, or None: a call failed). Whether the
        breaker still holds."""
        with self._lock:
            if self._open:
                # The probe failed (or a call begun before the breaker tripped).
                self._next_try = clock.monotonic() + self.retry_seconds
                return False
            if step is None or step >= self._run:
                self._run += 1
            if self._run < self.failures:
                return True
            self._open = True
            self._next_try = clock.monotonic() + self.retry_seconds
        self._tripped(f"{self.failures} failures in a row, the last: {reason}")
        return False


class SharedStorageFallback:
    """Runs a counter operation on the shared storage (Redis), or in this process's
    memory while the shared one is down: a Redis that does not answer must not hold
    requests, and one that answers late must not loosen the limits. Its
    CircuitBreaker says when Redis is down (`failures` in a row, the shared storage's
    option) and when to try it again (every `retry_seconds`); it says so once per
    outage, and when Redis is back. A call that fails outright is tried again while
    the breaker holds (at most `failures` times: had it reached Redis before the
    connection broke, its request counts twice, tighter and never looser); a call
    whose answer is given up on is not (Redis may have counted it, and the breaker
    has tripped, or Redis has been answering other calls while this one waited
    through every step: then this one request is decided in memory). The API's
    limiter and the dashboard's sign-in limiter share it."""

    def __init__(self, *, shared, local, retry_seconds: float, name: str, log: logging.Logger = logger):
        self.shared, self.local = shared, local
        self.retry_seconds = retry_seconds
        self.name = name
        self.log = log
        self.breaker = None
        if shared is not None:
            self.breaker = CircuitBreaker(
                failures=getattr(shared, "failures", 1), deadline=getattr(shared, "deadline", None),
                retry_seconds=retry_seconds, tripped=self._tripped, recovered=self._recovered,
            )
            if hasattr(shared, "attach"):
                shared.attach(self.breaker)

    def run(self, action):
        """`action(storage)` on the shared storage when it answers, else on the local one."""
        for attempt in self._tries():
            with attempt:
                return action(self.shared)
        # Redis down: keep limiting, per process, rather than refuse service.
        return action(self.local)

    async def run_async(self, shared_action, local_action):
        """`run` for a storage answering an awaitable: `await shared_action(shared)`
        when it answers, else `local_action(local)` (memory needs no waiting)."""
        for attempt in self._tries():
            with attempt:
                return await shared_action(self.shared)
        return local_action(self.local)

    def _tries(self):
        """The tries of the shared storage the breaker allows (none without one): the
        caller runs each inside it (_Try), and returns when one answers."""
        breaker = self.breaker
        if breaker is None:
            return
        for _ in range(breaker.failures):
            if not breaker.admits():
                return
            attempt = _Try(breaker)
            yield attempt
            if not attempt.again:
                return

    def _tripped(self, reason: str) -> None:
        self.log.warning(
            "%s storage unreachable (%s); counting in process memory, trying Redis again every %ss",
            self.name, reason, self.retry_seconds,
        )

    def _recovered(self) -> None:
        self.log.info("%s storage reachable again; counting in Redis", self.name)


class _Try:
    """One try of the shared storage, as a context: an answer is reported to the
    breaker; a call that failed outright is counted, and tried again while the
    breaker holds (`again`); one given up on (Unanswered) is not tried again, for
    it was counted step by step, and Redis may have counted it."""

    def __init__(self, breaker: CircuitBreaker):
        self.breaker = breaker
        self.again = False

    def __enter__(self):
        return self

    def __exit__(self, kind, error, _traceback) -> bool:
        if kind is None:
            self.breaker.answered()
            return False
        if issubclass(kind, Unanswered):
            return True
        if issubclass(kind, Exception):  # any storage failure
            self.again = self.breaker.failed(error)
            return True
        return False
