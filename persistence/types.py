"""Column types shared by the models (cross-cutting)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

from socialpub import clock


class UtcDateTime(TypeDecorator):
    """Aware UTC datetimes in and out, on SQLite (which keeps no zone) and PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(dt.timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)


def utcnow() -> dt.datetime:
    """Now, from the one clock seam: column defaults follow a test's fake clock too."""
    return clock.now()
