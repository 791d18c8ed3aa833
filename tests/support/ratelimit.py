"""Shared by the rate-limit tests: a Redis database of their own, unique client
addresses, reading the X-RateLimit headers, and removing the counters a test made."""
from __future__ import annotations

import datetime as dt
import re
import uuid
from urllib.parse import urlsplit, urlunsplit

# Rate-limit tests keep their counters in this Redis database, apart from the rest of
# the suite (database 0), and delete the ones they made.
LIMITER_REDIS_DB = 13
RESET_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def redis_url_for_db(url: str, db: int = LIMITER_REDIS_DB) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


def unique_address() -> str:
    """A client address no other test (or concurrent run) uses: IPv6 documentation range."""
    suffix = uuid.uuid4().hex
    return f"2001:db8:{suffix[:4]}:{suffix[4:8]}::{suffix[8:12]}"


def forget_counters(redis_url: str, identities) -> int:
    """Deletes the rate-limit counters of these identities (`key:<id>`, `address:<ip>`)."""
    from redis import Redis

    connection = Redis.from_url(redis_url)
    try:
        names = [name for identity in identities for name in connection.scan_iter(match=f"LIMITS:LIMITER/{identity}/*")]
        if names:
            connection.delete(*names)
        return len(names)
    finally:
        connection.close()


def reset_epoch(response) -> float:
    """X-RateLimit-Reset as epoch seconds, after checking it is ISO 8601 UTC with `Z`."""
    value = response.headers["X-RateLimit-Reset"]
    assert RESET_PATTERN.match(value), value
    parsed = dt.datetime.fromisoformat(value)
    assert parsed.utcoffset() == dt.timedelta(0)
    return parsed.timestamp()


def limit_headers(response) -> tuple[int, int]:
    """(X-RateLimit-Limit, X-RateLimit-Remaining) as integers."""
    return int(response.headers["X-RateLimit-Limit"]), int(response.headers["X-RateLimit-Remaining"])
