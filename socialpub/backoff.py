"""The one backoff (cross-cutting): how long to wait before attempt n+1 of anything
that is retried (a platform call, a webhook delivery), each with its own settings."""
from __future__ import annotations

import random


def delay_seconds(
    attempt: int, *, base: float, maximum: float, retry_after: float | None = None, rng=random,
    jitter_before_cap: bool = False,
) -> float:
    """Exponential backoff from `base`, doubling per attempt, with +-20% jitter so
    calls that failed together do not all come back at the same moment, capped at
    `maximum`. A server's own Retry-After wins (at least a second, at most `maximum`).

    `jitter_before_cap` jitters the uncapped delay, then caps it: once the delay is
    well past `maximum`, every wait is exactly `maximum` (publishing's retries);
    otherwise waits at the cap stay spread below it (webhook deliveries)."""
    if retry_after is not None:
        return min(max(float(retry_after), 1.0), maximum)
    delay = base * (2 ** max(attempt - 1, 0))
    if jitter_before_cap:
        return min(delay * rng.uniform(0.8, 1.2), maximum)
    return min(min(delay, maximum) * rng.uniform(0.8, 1.2), maximum)
