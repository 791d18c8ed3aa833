"""The shared storage of the rate limiters (the API's, socialpub.ratelimit, and the
dashboard's sign-in limiter): moving windows in Redis, exact across processes, a hit
one atomic script call. A call's answer is waited for in the steps of the storage's
circuit breaker, each step missed one failure; when Redis counts as down, the
limiters count in memory (SharedStorageFallback, socialpub.ratelimit_fallback).

The API gate asks Redis on the event loop (`RateLimiter.hit_async`, an asyncio client
per loop with a few connections): no thread is taken to count a request. The loop
sees an answer when it next looks, not as it comes, so there a step is timed from
when Redis was asked (connected to, or sent the call) and counts as missed only when
no byte of the answer has come by then.
"""
from __future__ import annotations

import asyncio
import contextvars
import select

from redis import Redis
from redis import asyncio as redis_asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.connection import Connection, parse_url
from redis.retry import Retry

from socialpub.config import Settings
from socialpub.ratelimit_fallback import CircuitBreaker, Unanswered
from socialpub.ratelimit_windows import Tally, Window, counter_key

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
        self._async: dict[int, tuple] = {}  # id(event loop): (the loop, its client, the script on it)

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
        to the loop that made it: a server has one loop per process; a process may run
        several, as tests do, each keeping its client while it runs)."""
        loop = asyncio.get_running_loop()
        made = self._async.get(id(loop))
        if made is None or made[0] is not loop:
            for key in [key for key, (other, *_) in self._async.items() if other.is_closed()]:
                del self._async[key]
            pool = redis_asyncio.BlockingConnectionPool.from_url(
                self._url, connection_class=_watched_connection(self._url), max_connections=ASYNC_CONNECTIONS,
                timeout=None, **self._async_options,
            )
            client = redis_asyncio.Redis(connection_pool=pool)
            made = self._async[id(loop)] = (loop, client, client.register_script(HIT_SCRIPT))
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
