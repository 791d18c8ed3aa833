"""Per-key rate limits (cross-cutting): moving windows, counted exactly.

Windows of a key: its minute window (custom or the default 60, capped by the
service-wide ceiling per minute) and its day window (custom or 10,000). Requests without a valid key are limited per client address.
Counters live in Redis when configured (exact across processes), else in memory.

A request is counted and its windows read in one atomic step (a Lua script in Redis,
one lock in memory): read separately, concurrent requests of one key saw each
other's hits, so that `X-RateLimit-Remaining` went 0, 0, 0, then 14.

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

The API gate asks Redis on the event loop (`RateLimiter.hit_async`, an asyncio client
per loop with a few connections): no thread is taken to count a request. The loop
sees an answer when it next looks, not as it comes, so there a step is timed from
when Redis was asked (connected to, or sent the call) and counts as missed only when
no byte of the answer has come by then.
"""
from __future__ import annotations

import asyncio
import collections
import contextvars
import dataclasses
import datetime as dt
import logging
import math
import select
import threading
from dataclasses import dataclass

from limits import RateLimitItemPerDay, RateLimitItemPerMinute
from redis import Redis
from redis import asyncio as redis_asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.connection import Connection, parse_url
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from socialpub import clock, keycache
from socialpub.config import Settings
from socialpub.principal import Principal

logger = logging.getLogger("socialpub.ratelimit")


@dataclass(frozen=True)
class Window:
    name: str
    item: object  # limits.RateLimitItem: amount, get_expiry(), key_for()
    description: str


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: float  # epoch seconds
    retry_after: int
    refused_by: Window | None
    # The API key revision, read in the same Redis call (None: no Redis, or none
    # published yet; see socialpub.keycache).
    key_revision: int | None = None

    def headers(self) -> dict[str, str]:
        # Rounded up to the second: a client that waits until then is not refused again.
        reset = dt.datetime.fromtimestamp(math.ceil(self.reset_at), dt.timezone.utc)
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": reset.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }


@dataclass(frozen=True)
class Tally:
    """What one atomic hit saw: the index of the window that refused (None: counted in
    all), and per window the requests it holds (this one included) and the time of
    the oldest of them (now when it holds none)."""

    refused: int | None
    counts: list[tuple[int, float]]
    read: str | None = None  # the value of the key asked to be read with the hit (Redis only)


def counter_key(identity: str, window: Window) -> str:
    # The key `limits` gives a moving window, so counters written before survive.
    return window.item.key_for(identity, window.name)


class MemoryCounters:
    """Moving windows in this process's memory: per window, the times of the requests
    it holds, oldest first, at most its limit. One lock makes a hit and the read of
    every window of it one step (hits take microseconds)."""

    # Windows nobody hit for a whole length are dropped this often, so callers seen
    # once (client addresses) are not kept for ever.
    SWEEP_SECONDS = 60.0

    def __init__(self):
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, collections.deque]] = {}
        self._swept_at = clock.monotonic()

    def hit(self, identity: str, windows: list[Window], now: float, read: str | None = None) -> Tally:
        with self._lock:
            self._sweep(now)
            held = [self._times(counter_key(identity, window), window, now) for window in windows]
            refused = None
            for index, (window, times) in enumerate(zip(windows, held)):
                # Stop at the first full window so a refused request is not counted
                # in the windows after it.
                if len(times) >= window.item.amount:
                    refused = index
                    break
                times.append(now)
            return Tally(refused, [(len(times), times[0] if times else now) for times in held])

    def get_window_stats(self, item, *identifiers: str) -> tuple[float, int]:
        """(reset time, remaining) of one window, as `limits` reports them."""
        now = clock.now().timestamp()
        expiry = item.get_expiry()
        with self._lock:
            _, times = self._windows.get(item.key_for(*identifiers), (expiry, collections.deque()))
            within = [moment for moment in times if moment >= now - expiry]
        return (within[0] if within else now) + expiry, item.amount - len(within)

    def _times(self, key: str, window: Window, now: float) -> collections.deque:
        expiry = window.item.get_expiry()
        entry = self._windows.get(key)
        if entry is None:
            entry = self._windows[key] = (expiry, collections.deque())
        times = entry[1]
        while times and times[0] < now - expiry:
            times.popleft()
        return times

    def _sweep(self, now: float) -> None:
        if clock.monotonic() - self._swept_at < self.SWEEP_SECONDS:
            return
        self._swept_at = clock.monotonic()
        idle = [key for key, (expiry, times) in self._windows.items() if not times or times[-1] < now - expiry]
        for key in idle:
            del self._windows[key]


# One request against the moving windows of one caller, in one step. A window refuses
# when it already holds its limit of requests younger than its length; the request
# is recorded in each window up to the first that refuses; then every window's count
# and oldest request are read.
# KEYS[i] (i <= ARGV[2]): window i, a list of request times, newest first, at most
# its limit long (as `limits` keeps a moving window); a key after them, if any, is
# read and its value returned last (the API key revision: socialpub.keycache).
# ARGV[1]: now; ARGV[2]: the number of windows; ARGV[2i+1], ARGV[2i+2]: window i's
# limit and length in seconds. Returns {refused window (0: none), then per window its
# count and its oldest time (now when empty), then the read value, if asked}.
HIT_SCRIPT = """
local now = tonumber(ARGV[1])
local windows = tonumber(ARGV[2])
local refused = 0
for i = 1, windows do
    local limit = tonumber(ARGV[2 * i + 1])
    local expiry = tonumber(ARGV[2 * i + 2])
    local entry = redis.call('lindex', KEYS[i], limit - 1)
    if entry and tonumber(entry) >= now - expiry then
        refused = i
        break
    end
    redis.call('lpush', KEYS[i], ARGV[1])
    redis.call('ltrim', KEYS[i], 0, limit - 1)
    redis.call('expire', KEYS[i], expiry)
end
local result = {refused}
for i = 1, windows do
    local expiry = tonumber(ARGV[2 * i + 2])
    local low, high, last = 0, redis.call('llen', KEYS[i]) - 1, -1
    while low <= high do
        local middle = math.floor((low + high) / 2)
        if tonumber(redis.call('lindex', KEYS[i], middle)) >= now - expiry then
            last = middle
            low = middle + 1
        else
            high = middle - 1
        end
    end
    if last >= 0 then
        result[#result + 1] = last + 1
        result[#result + 1] = redis.call('lindex', KEYS[i], last)
    else
        result[#result + 1] = 0
        result[#result + 1] = ARGV[1]
    end
end
if #KEYS > windows then
    result[#result + 1] = redis.call('get', KEYS[windows + 1]) or ''
end
return result
"""

REDIS_KEY_PREFIX = "LIMITS:"  # as `limits` names its keys


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


class SteppedReads:
    """Mixed into a Redis connection class (per RedisCounters, see stepped_connection):
    every answer it reads, a new connection's handshake included, is waited for in
    its breaker's steps, each step missed reported to the breaker; given up once the
    breaker says so (the connection closed: the answer, should it come, would be read
    as the next call's). Without a breaker, a plain connection."""

    breaker: CircuitBreaker | None = None

    def read_response(self, *args, **kwargs):
        breaker = self.breaker
        if breaker is not None:
            step = 0
            while not self.can_read(timeout=breaker.steps[step]):
                if not breaker.missed(step):
                    self.disconnect()
                    raise Unanswered(f"no answer within {breaker.waited(step):g} s")
                step += 1
            breaker.answered()
        return super().read_response(*args, **kwargs)


def stepped_connection(url: str) -> type:
    """A connection class of its own for one client of `url` (TCP, TLS or a Unix
    socket, as the URL says), whose answers are read in steps (SteppedReads)."""
    base = parse_url(url).get("connection_class", Connection)
    return type(f"Stepped{base.__name__}", (SteppedReads, base), {})


class RedisCounters:
    """Moving windows in Redis, shared by every process; a hit is one script call.

    Options: the Redis client's (`redis_deadlines`), and `failures`, the steps an
    answer is waited for in (see CircuitBreaker), the first `socket_timeout` long.
    The breaker is the SharedStorageFallback's, attached by it.

    `hit` waits on its thread (the dashboard's sign-in limiter, the MCP endpoint);
    `hit_async` is the same call on an asyncio client of the running event loop (the
    API gate), so that a request is counted without handing it to a thread."""

    def __init__(self, url: str, *, failures: int = 1, **redis_options):
        self.failures = failures
        self.deadline = redis_options.get("socket_timeout")
        self.breaker: CircuitBreaker | None = None
        self._connection_class = stepped_connection(url)
        # No retries inside the client: SharedStorageFallback tries a failed call again.
        self._redis = Redis.from_url(
            url, connection_class=self._connection_class, retry=Retry(NoBackoff(), 0), **redis_options
        )
        self._hit = self._redis.register_script(HIT_SCRIPT)
        # The asyncio client waits for no answer and no connection itself: hit_async
        # waits for both in the breaker's steps, timed from when Redis was asked.
        self._async_options = {
            **{name: value for name, value in redis_options.items() if name not in ("socket_timeout", "socket_connect_timeout")},
            "retry": AsyncRetry(NoBackoff(), 0),
        }
        self._url = url
        self._async: tuple | None = None  # (event loop, client, script)

    def attach(self, breaker: CircuitBreaker) -> None:
        self.breaker = breaker
        self._connection_class.breaker = breaker

    def hit(self, identity: str, windows: list[Window], now: float, read: str | None = None) -> Tally:
        """The hit; and the value of the Redis key `read`, in the same call."""
        keys, args = _script_call(identity, windows, now, read)
        return _tally(self._hit(keys=keys, args=args), read)

    async def hit_async(self, identity: str, windows: list[Window], now: float, read: str | None = None) -> Tally:
        """`hit`, awaited. Its answer is waited for in the breaker's steps as `hit`'s
        is, with one difference: a thread waiting on its socket sees an answer as it
        comes, while an event loop sees it when it next looks, and a loop busy with
        other requests may look late. So a step counts as missed only when Redis has
        had the call for the whole step (counted from when it was sent, see
        _CallWatch) and no byte of the answer has come (read or not). A call given up
        on is cancelled, and the asyncio client closes a connection whose answer
        was not read, so that answer is never taken for another call's."""
        keys, args = _script_call(identity, windows, now, read)
        watch = _CallWatch()
        watching = _watched_call.set(watch)
        try:
            call = asyncio.ensure_future(self._async_script()(keys=keys, args=args))  # runs in a copy of this context
        finally:
            _watched_call.reset(watching)
        breaker, step = self.breaker, 0
        timeout = breaker.steps[0] if breaker else None
        while not (await asyncio.wait((call,), timeout=timeout))[0]:
            if watch.answer_begun():
                await asyncio.wait((call,))
                break
            held = watch.held()
            if held < breaker.waited(step):
                timeout = breaker.waited(step) - held
                continue
            if not breaker.missed(step):
                call.cancel()
                await asyncio.wait((call,))
                if not call.cancelled():
                    call.exception()  # retrieved: the call is given up on either way
                raise Unanswered(f"no answer within {breaker.waited(step):g} s")
            step += 1
            timeout = breaker.steps[step]
        return _tally(call.result(), read)

    def _async_script(self):
        """The hit script on this event loop's client (an asyncio connection belongs
        to the loop that made it: a server has one loop per process; a test may
        start several)."""
        loop = asyncio.get_running_loop()
        made = self._async
        if made is None or made[0] is not loop:
            pool = redis_asyncio.BlockingConnectionPool.from_url(
                self._url, connection_class=_watched_connection(self._url), max_connections=ASYNC_CONNECTIONS,
                timeout=None, **self._async_options,
            )
            client = redis_asyncio.Redis(connection_pool=pool)
            made = self._async = (loop, client, client.register_script(HIT_SCRIPT))
        return made[2]


# Connections of one process's asyncio client. A hit takes Redis a fraction of a
# millisecond, so a few connections carry thousands a second; a hit waiting for one
# has not been sent, and its steps have not begun (_CallWatch). A burst of requests
# (a worker's first second) does not open a connection each.
ASYNC_CONNECTIONS = 8


class _CallWatch:
    """What one asyncio hit has sent and on which connection (set by the connection,
    _WatchedSends): the time Redis has had it, and whether its answer has begun."""

    def __init__(self):
        self.connection = None
        self.sent_at: float | None = None  # the event loop's clock

    def held(self) -> float:
        return 0.0 if self.sent_at is None else asyncio.get_running_loop().time() - self.sent_at

    def answer_begun(self) -> bool:
        """Bytes of an answer are here: in the client's buffers, or at its socket."""
        connection = self.connection
        reader = getattr(connection, "_reader", None)
        if reader is None:
            return False
        if len(reader._buffer) or getattr(connection._parser, "_buffer", None):
            return True
        sock = connection._writer.get_extra_info("socket")
        return sock is not None and bool(select.select([sock.fileno()], [], [], 0)[0])


_watched_call: contextvars.ContextVar[_CallWatch | None] = contextvars.ContextVar("ratelimit_call", default=None)


class _WatchedSends:
    """Mixed into an asyncio Redis connection class: the connection a watched hit
    opens, and every command it sends for it (the new connection's handshake
    included), are noted in the hit's _CallWatch with the time Redis was asked."""

    async def connect_check_health(self, *args, **kwargs) -> None:
        watch = _watched_call.get()
        if watch is not None and not self.is_connected:
            watch.connection = self
            watch.sent_at = asyncio.get_running_loop().time()
        await super().connect_check_health(*args, **kwargs)

    async def send_packed_command(self, command, check_health: bool = True) -> None:
        watch = _watched_call.get()
        if watch is not None:
            watch.connection = self
        await super().send_packed_command(command, check_health)
        if watch is not None:
            watch.sent_at = asyncio.get_running_loop().time()


def _watched_connection(url: str) -> type:
    base = redis_asyncio.connection.parse_url(url).get("connection_class", redis_asyncio.Connection)
    return type(f"Watched{base.__name__}", (_WatchedSends, base), {})


def _script_call(identity: str, windows: list[Window], now: float, read: str | None) -> tuple[list, list]:
    """HIT_SCRIPT's keys and arguments for one hit (and the key `read`)."""
    keys = [REDIS_KEY_PREFIX + counter_key(identity, window) for window in windows]
    args = [repr(now), len(windows)]
    for window in windows:
        args += [window.item.amount, window.item.get_expiry()]
    return keys + ([read] if read else []), args


def _tally(answer: list, read: str | None) -> Tally:
    refused, *counts = answer
    value = None
    if read:
        value = counts.pop().decode() or None
    return Tally(
        refused - 1 if refused else None,
        [(int(counts[i]), float(counts[i + 1])) for i in range(0, len(counts), 2)],
        value,
    )


def redis_deadlines(settings: Settings) -> dict:
    """The options of every limiter's RedisCounters (the API's and the dashboard's
    sign-in limiter's): the Redis client's deadlines, and the failures in a row
    after which Redis counts as down (CircuitBreaker)."""
    return {
        "socket_connect_timeout": settings.rate_limit_redis_connect_timeout_seconds,
        "socket_timeout": settings.rate_limit_redis_timeout_seconds,
        "failures": settings.rate_limit_redis_failures,
    }


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
        breaker = self.breaker
        if breaker is None:
            return action(self.local)
        for _ in range(breaker.failures):
            if not breaker.admits():
                break
            try:
                result = action(self.shared)
            except Unanswered:
                break  # counted step by step; and the call may have been counted in Redis
            except Exception as error:  # noqa: BLE001 - any storage failure
                if breaker.failed(error):
                    continue
                break
            breaker.answered()
            return result
        # Redis down: keep limiting, per process, rather than refuse service.
        return action(self.local)

    async def run_async(self, shared_action, local_action):
        """`run` for a storage answering an awaitable: `await shared_action(shared)`
        when it answers, else `local_action(local)` (memory needs no waiting)."""
        breaker = self.breaker
        if breaker is None:
            return local_action(self.local)
        for _ in range(breaker.failures):
            if not breaker.admits():
                break
            try:
                result = await shared_action(self.shared)
            except Unanswered:
                break
            except Exception as error:  # noqa: BLE001 - any storage failure
                if breaker.failed(error):
                    continue
                break
            breaker.answered()
            return result
        return local_action(self.local)

    def _tripped(self, reason: str) -> None:
        self.log.warning(
            "%s storage unreachable (%s); counting in process memory, trying Redis again every %ss",
            self.name, reason, self.retry_seconds,
        )

    def _recovered(self) -> None:
        self.log.info("%s storage reachable again; counting in Redis", self.name)


class RateLimiter:
    def __init__(self, settings: Settings):
        self.settings = settings
        shared = RedisCounters(settings.redis_url, **redis_deadlines(settings)) if settings.redis_url else None
        self._counters = SharedStorageFallback(
            shared=shared, local=MemoryCounters(), retry_seconds=settings.rate_limit_redis_retry_seconds,
            name="rate-limit",
        )

    @property
    def shares_counters(self) -> bool:
        """Counted in Redis (shared by every process), which also answers the key
        revision with each hit; else in this process's memory."""
        return self._counters.shared is not None

    def windows_for(self, principal: Principal | None) -> tuple[str, list[Window]]:
        settings = self.settings
        if principal is None:
            per_minute = settings.rate_limit_anonymous_per_minute
            return "anonymous", [Window("minute", RateLimitItemPerMinute(per_minute), f"{per_minute} requests per minute")]
        per_minute = principal.per_minute or settings.rate_limit_default_per_minute
        per_day = principal.per_day or settings.rate_limit_default_per_day
        ceiling = settings.rate_limit_ceiling_per_minute
        # The service ceiling caps the key's minute window, so one minute window
        # enforces both (and costs one counter, not two).
        if per_minute > ceiling:
            minute = Window("minute", RateLimitItemPerMinute(ceiling), f"the service ceiling of {ceiling} requests per minute")
        else:
            minute = Window("minute", RateLimitItemPerMinute(per_minute), f"{per_minute} requests per minute")
        windows = [minute, Window("day", RateLimitItemPerDay(per_day), f"{per_day} requests per day")]
        return f"key:{principal.api_key_id}", windows

    def hit(self, identity: str, windows: list[Window]) -> Decision:
        now = clock.now().timestamp()
        tally = self._counters.run(lambda counters: counters.hit(identity, windows, now, read=keycache.REVISION_KEY))
        return _decision(windows, tally, now)

    async def hit_async(self, identity: str, windows: list[Window]) -> Decision:
        """`hit` without a thread: Redis is asked on the event loop's own client."""
        now = clock.now().timestamp()
        tally = await self._counters.run_async(
            lambda shared: shared.hit_async(identity, windows, now, read=keycache.REVISION_KEY),
            lambda local: local.hit(identity, windows, now, read=keycache.REVISION_KEY),
        )
        return _decision(windows, tally, now)


def _decision(windows: list[Window], tally: Tally, now: float) -> Decision:
    decision = decide(windows, tally, now)
    if tally.read is not None:
        decision = dataclasses.replace(decision, key_revision=int(tally.read))
    return decision


def decide(windows: list[Window], tally: Tally, now: float) -> Decision:
    """The decision, and the window its headers report, from one atomic hit."""
    stats = [
        (window, max(0, window.item.amount - count), max(oldest + window.item.get_expiry(), now))
        for window, (count, oldest) in zip(windows, tally.counts)
    ]
    refused = windows[tally.refused] if tally.refused is not None else None
    if refused is not None:
        # A request passes only when every full window has room again: report the
        # full window that frees last (the day when minute and day are both full).
        # The refusing window is kept unless another frees over a second later, so a
        # ceiling filled together with the minute window it caps is still named.
        blocking = stats[tally.refused]
        for candidate in stats:
            if candidate[1] == 0 and candidate[2] > blocking[2] + 1:
                blocking = candidate
        window, remaining, reset_at = blocking
        refused = window
    else:
        window, remaining, reset_at = min(stats, key=lambda s: (s[1], -s[2]))
    return Decision(
        allowed=refused is None,
        limit=window.item.amount,
        remaining=remaining,
        reset_at=reset_at,
        retry_after=max(1, math.ceil(reset_at - now)),
        refused_by=refused,
    )
