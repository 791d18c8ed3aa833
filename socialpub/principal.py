"""Who is calling (cross-cutting): the authenticated key, its workspace, mode, scopes and limits."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    api_key_id: uuid.UUID
    workspace_id: uuid.UUID
    livemode: bool
    scopes: frozenset[str]
    plan: str
    per_minute: int | None
    per_day: int | None
    # The earliest of the key's expiry and, for a rolled value, its grace deadline.
    valid_until: dt.datetime | None
    # The key's name, as its owner gave it: what the calendar shows as a comment's author.
    key_name: str | None = None

    @property
    def mode(self) -> str:
        return "live" if self.livemode else "test"

    def is_valid_at(self, now: dt.datetime) -> bool:
        return self.valid_until is None or now < self.valid_until
