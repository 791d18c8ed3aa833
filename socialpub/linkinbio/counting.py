"""Views and clicks of public pages, counted off the request's path to the database.

A request records an event in its process's memory (`Counter.record`: a list append,
no I/O) with the visitor as a hash: SHA-256 of the day's salt (random, one per UTC
day, kept in the database and removed two days later), the page, the address and the
user agent. No cookie is set and the address itself is never stored. Known bots are
not recorded.

Where the events wait for the flush (socialpub.linkinbio.flushing) depends on the
deployment:
- with Redis (`REDIS_URL`), each process ships its events to a Redis list every
  second; the flush claims a slice of the list under a token with a lease (a Lua
  script moves it to a list of the claim's own), adds it to the database and drops
  the claim. A claim whose flush died is taken again when its lease runs out, and a
  flush that had committed is recognised by its token: nothing is counted twice.
- without (the embedded default, one process), the events wait in the process's own
  store, claimed the same way.
A crash loses what was not shipped or flushed yet: at most one second of a process's
events with Redis, at most one flush interval without.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
import secrets
import threading
import uuid
from collections.abc import Iterable
from urllib.parse import urlsplit

from sqlalchemy import select

from persistence.linkinbio import LinkSalt
from socialpub import claims, clock

logger = logging.getLogger("socialpub.linkinbio")
SHIP_EVERY_SECONDS = 1.0
MAX_REFERRER_CHARS = 255
DIRECT = "direct"
BOTS = re.compile(
    r"bot|crawl|spider|slurp|archiver|facebookexternalhit|embedly|preview|fetch|monitor|lighthouse|headless|"
    r"curl|wget|python-requests|httpx|go-http-client|java/|okhttp|scrapy|feedfetcher|validator",
    re.IGNORECASE,
)


def is_bot(user_agent: str | None) -> bool:
    """A known crawler, link previewer, monitor or script (an empty agent too)."""
    return not user_agent or BOTS.search(user_agent) is not None


def referrer_host(referer: str | None, own_host: str | None) -> str:
    """The referring site's host (no path or query: they may name the visitor), or
    `direct` without one, for the page's own links, or for one that does not parse."""
    if not referer:
        return DIRECT
    try:
        host = (urlsplit(referer.strip()).hostname or "").lower()
    except ValueError:
        return DIRECT
    if not host or host == (own_host or "").lower() or not re.fullmatch(r"[a-z0-9.\-:\[\]]+", host):
        return DIRECT
    return host.removeprefix("www.")[:MAX_REFERRER_CHARS]


class Salts:
    """The salt of each UTC day, read (or made) once per process and day."""

    def __init__(self):
        self._known: dict[dt.date, str] = {}
        self._lock = threading.Lock()

    def known(self, day: dt.date) -> str | None:
        return self._known.get(day)

    def of(self, database, day: dt.date) -> str:
        found = self._known.get(day)
        if found is not None:
            return found
        with database.transaction() as session:
            claims.insert_new(session, LinkSalt, [{"day": day, "salt": secrets.token_hex(32)}], unique=["day"],
                              returning=LinkSalt.day)
            salt = session.execute(select(LinkSalt.salt).where(LinkSalt.day == day)).scalar_one()
        with self._lock:
            self._known = {each: value for each, value in self._known.items() if each >= day - dt.timedelta(days=1)}
            self._known[day] = salt
        return salt


def visitor_hash(salt: str, page_id, address: str | None, user_agent: str | None) -> str:
    text = "\x1f".join((salt, str(page_id), address or "", user_agent or ""))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


def event(kind: str, page_id, block_id, visitor: str, referrer: str, at: dt.datetime) -> str:
    """One event as it waits: `v` (a view) or `c` (a click), '|'-separated."""
    return f"{kind}|{page_id}|{block_id or ''}|{visitor}|{referrer}|{at.timestamp():.3f}"


def parse(text: str | bytes):
    """(kind, page id, block id or None, visitor, referrer, time), or None for a line
    that is not an event."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    parts = text.split("|")
    if len(parts) != 6 or parts[0] not in ("v", "c"):
        return None
    try:
        page_id = uuid.UUID(parts[1])
        block_id = uuid.UUID(parts[2]) if parts[2] else None
        at = dt.datetime.fromtimestamp(float(parts[5]), dt.timezone.utc)
    except ValueError:
        return None
    return parts[0], page_id, block_id, parts[3], parts[4] or DIRECT, at


class MemoryStore:
    """Events waiting in this process, claimed under a token with a lease."""

    def __init__(self):
        self._events: list[str] = []
        self._claims: dict[str, tuple[float, list[str]]] = {}
        self._lock = threading.Lock()

    def push(self, events: Iterable[str]) -> None:
        with self._lock:
            self._events.extend(events)

    def claim(self, *, limit: int, lease_seconds: float) -> tuple[str, list[str]] | None:
        now = clock.now().timestamp()
        with self._lock:
            for token, (until, events) in self._claims.items():
                if until <= now:
                    self._claims[token] = (now + lease_seconds, events)
                    return token, events
            if not self._events:
                return None
            taken, self._events = self._events[:limit], self._events[limit:]
            token = str(uuid.uuid4())
            self._claims[token] = (now + lease_seconds, taken)
            return token, taken

    def done(self, token: str) -> None:
        with self._lock:
            self._claims.pop(token, None)

    def waiting(self) -> int:
        with self._lock:
            return len(self._events) + sum(len(events) for _, events in self._claims.values())


_CLAIM = """
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #expired > 0 then
  local token = expired[1]
  redis.call('ZADD', KEYS[2], ARGV[2], token)
  return {token, redis.call('LRANGE', ARGV[4] .. token, 0, -1)}
end
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
if #items == 0 then return false end
redis.call('LTRIM', KEYS[1], #items, -1)
redis.call('RPUSH', ARGV[4] .. ARGV[5], unpack(items))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
return {ARGV[5], items}
"""


class RedisStore:
    """Events waiting in Redis for every process, claimed by a Lua script (atomic)."""

    PREFIX = "socialpub:linkinbio:"

    def __init__(self, url: str, **options):
        from redis import Redis

        self._redis = Redis.from_url(url, **options)
        self._events = self.PREFIX + "events"
        self._claims = self.PREFIX + "claims"
        self._claimed = self.PREFIX + "claim:"
        self._claim = self._redis.register_script(_CLAIM)

    def push(self, events: Iterable[str]) -> None:
        events = list(events)
        for start in range(0, len(events), 1000):
            self._redis.rpush(self._events, *events[start:start + 1000])

    def claim(self, *, limit: int, lease_seconds: float) -> tuple[str, list[str]] | None:
        now = clock.now().timestamp()
        found = self._claim(keys=[self._events, self._claims],
                            args=[now, now + lease_seconds, limit, self._claimed, str(uuid.uuid4())])
        if not found:
            return None
        token, events = found
        return token.decode(), [each.decode("utf-8", "replace") for each in events]

    def done(self, token: str) -> None:
        pipe = self._redis.pipeline()
        pipe.delete(self._claimed + token)
        pipe.zrem(self._claims, token)
        pipe.execute()

    def waiting(self) -> int:
        total = self._redis.llen(self._events)
        for token in self._redis.zrange(self._claims, 0, -1):
            total += self._redis.llen(self._claimed + token.decode())
        return total


class Counter:
    """A process's events: recorded in memory, shipped to the store (at once for the
    process's own store; every second to Redis, by a thread of the process)."""

    def __init__(self, store, *, shipped: bool):
        self.store = store
        self.salts = Salts()
        self._shipped = shipped
        self._pending: list[str] = []
        self._ship_lock = threading.Lock()
        self._shipper: threading.Thread | None = None
        self._stop = threading.Event()

    def record(self, line: str) -> None:
        if not self._shipped:
            self.store.push((line,))
            return
        self._pending.append(line)
        if self._shipper is None:
            self._start_shipper()

    def ship(self) -> int:
        """Moves this process's recorded events to the store."""
        with self._ship_lock:
            taken, self._pending = self._pending, []
            if taken:
                try:
                    self.store.push(taken)
                except Exception:  # noqa: BLE001 - Redis away: keep them for the next try
                    self._pending[:0] = taken
                    raise
            return len(taken)

    def _start_shipper(self) -> None:
        with self._ship_lock:
            if self._shipper is not None:
                return
            self._shipper = threading.Thread(target=self._ship_forever, name="linkinbio-shipper", daemon=True)
            self._shipper.start()

    def _ship_forever(self) -> None:
        while not self._stop.wait(SHIP_EVERY_SECONDS):
            try:
                self.ship()
            except Exception:  # noqa: BLE001 - tried again in a second
                logger.warning("recorded page views could not reach Redis; tried again in a second", exc_info=True)


_counters: dict = {}
_counters_lock = threading.Lock()


def counter_for(settings) -> Counter:
    """The process's counter for these settings (Redis when configured)."""
    key = settings.redis_url
    found = _counters.get(key)
    if found is None:
        with _counters_lock:
            found = _counters.get(key)
            if found is None:
                if settings.redis_url:
                    store = RedisStore(settings.redis_url, socket_connect_timeout=2, socket_timeout=2)
                    found = Counter(store, shipped=True)
                else:
                    found = Counter(MemoryStore(), shipped=False)
                _counters[key] = found
    return found
