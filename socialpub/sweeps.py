"""A process's periodic sweeps: where one goes on from, and when it is next due.

- `Position`: a sweep that reads a bounded page of rows in key order (the search
  vocabulary's prune, publishing's sweep for unsettled posts) keeps the key of the
  last row it read, and starts again from the first once it reached the last.
- `Interval`: work a process does now and then beside a more frequent one (the
  dispatcher's sweep for unsettled posts, the webhook fan-out's read back for late
  events) is due at first, then once `seconds` have passed (clock.monotonic()).

Both are kept by the process: a restart starts from the first row, and is due at once."""
from __future__ import annotations

from dataclasses import dataclass

from socialpub import clock


@dataclass
class Position:
    after: tuple | None = None  # the key of the last row read; None: from the first


@dataclass
class Interval:
    next_at: float = 0.0  # clock.monotonic() from which it is due

    def due(self, seconds: float) -> bool:
        """Whether it is due; if it is, it is next due `seconds` from now."""
        now = clock.monotonic()
        if now < self.next_at:
            return False
        self.next_at = now + seconds
        return True
