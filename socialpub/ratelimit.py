"""Per-key rate limits (cross-cutting), on the `limits` library (moving windows: exact counts).

Windows of a key: its minute window (custom or the default 60, capped by the
service-wide ceiling per minute) and its day window (custom or 10,000). Requests without a valid key are limited per client address.
Counters live in Redis when configured (exact across processes), else in memory.
"""
from __future__ import annotations

import datetime as dt
import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItemPerDay, RateLimitItemPerMinute
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

from socialpub.config import Settings
from socialpub.principal import Principal

logger = logging.getLogger("socialpub.ratelimit")


@dataclass(frozen=True)
class Window:
    name: str
    item: object  # limits.RateLimitItem
    description: str


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: float  # epoch seconds
    retry_after: int
    refused_by: Window | None

    def headers(self) -> dict[str, str]:
        # Rounded up to the second: a client that waits until then is not refused again.
        reset = dt.datetime.fromtimestamp(math.ceil(self.reset_at), dt.timezone.utc)
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": reset.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }


class RateLimiter:
    def __init__(self, settings: Settings):
        self.settings = settings
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._shared = None
        if settings.redis_url:
            self._shared = MovingWindowRateLimiter(storage_from_string(settings.redis_url))

    @property
    def uses_blocking_io(self) -> bool:
        return self._shared is not None

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
        try:
            return self._hit(self._shared or self._local, identity, windows)
        except Exception:  # noqa: BLE001 - any storage failure
            if self._shared is None:
                raise
            # Redis unreachable: keep limiting, per process, rather than refuse service.
            logger.warning("rate-limit storage unreachable; counting in process memory", exc_info=True)
            return self._hit(self._local, identity, windows)

    @staticmethod
    def _hit(strategy: MovingWindowRateLimiter, identity: str, windows: list[Window]) -> Decision:
        refused = None
        for window in windows:
            # Stop at the first full window so a refused request is not counted again
            # in the windows after it.
            if not strategy.hit(window.item, identity, window.name):
                refused = window
                break
        now = time.time()
        stats = []
        for window in windows:
            reset_at, remaining = strategy.get_window_stats(window.item, identity, window.name)
            stats.append((window, max(0, remaining), max(reset_at, now)))
        if refused is not None:
            # A request passes only when every full window has room again: report the
            # full window that frees last (the day when minute and day are both full).
            # The refusing window is kept unless another frees over a second later, so a
            # ceiling filled together with the minute window it caps is still named.
            blocking = next(s for s in stats if s[0] is refused)
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
