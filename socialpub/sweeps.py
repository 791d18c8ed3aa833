"""Where a process's periodic sweep goes on from: a sweep that reads a bounded page of
rows in key order (the search vocabulary's prune, publishing's sweep for unsettled
posts) keeps the key of the last row it read, and starts again from the first once it
reached the last. Kept by the process: a restart starts from the first row."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Position:
    after: tuple | None = None  # the key of the last row read; None: from the first
