"""Everything one running process shares (cross-cutting): settings, database, limiter, job queue."""
from __future__ import annotations

from dataclasses import dataclass

from persistence.db import Database
from socialpub.config import Settings
from socialpub.ratelimit import RateLimiter


@dataclass
class Runtime:
    settings: Settings
    database: Database
    rate_limiter: RateLimiter
    queue: object  # workers.queue.JobQueue

    def close(self) -> None:
        close = getattr(self.queue, "close", None)
        if close:
            close()
        self.database.dispose()
