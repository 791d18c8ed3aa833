"""Per-key rate limits (cross-cutting): moving windows, counted exactly.

Windows of a key: its minute window (custom or the default 60, capped by the
service-wide ceiling per minute) and its day window (custom or 10,000). Requests without a valid key are limited per client address.
Counters live in Redis when configured (exact across processes; socialpub.ratelimit_redis),
else in memory; while Redis does not answer, each process counts in its own memory
(socialpub.ratelimit_fallback).

A request is counted and its windows read in one atomic step (a Lua script in Redis,
one lock in memory): read separately, concurrent requests of one key saw each
other's hits, so that `X-RateLimit-Remaining` went 0, 0, 0, then 14.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import math
import threading
from dataclasses import dataclass

from limits import RateLimitItemPerDay, RateLimitItemPerMinute

from socialpub import clock, keycache
from socialpub.config import Settings
from socialpub.principal import Principal
from socialpub.ratelimit_fallback import SharedStorageFallback
from socialpub.ratelimit_redis import RedisCounters, redis_deadlines
from socialpub.ratelimit_windows import Tally, Window, counter_key


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
