"""What the rate limiters and their counter storages share: a moving window, what one
atomic hit of a caller's windows saw, and the key of a window's counter. Apart from
the limiter (socialpub.ratelimit), so that the storages (socialpub.ratelimit_redis)
use them without importing the limiter that uses them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    name: str
    item: object  # limits.RateLimitItem: amount, get_expiry(), key_for()
    description: str


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
