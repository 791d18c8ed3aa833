"""Resolved API keys (cross-cutting, part of authentication), reused for a few seconds so most requests skip the key lookup, and the key revision that ends that reuse at once.

Only valid keys are cached (so unknown values cannot fill it); expiry and grace
deadlines are still checked on every use. Every revocation and roll moves the key
revision (a row of `api_key_revisions`, in the same transaction). A cached key is
used only while the revision it was resolved under is still the current one, so a
revoked key stops working at its very next request in every process:
- with Redis, the revision is mirrored there after the commit (`RedisKeyRevision`) and
  read in the same script call that counts the request's rate limits: no extra round
  trip;
- on the embedded default (no Redis), it is read from the database on each cache hit,
  an indexed read of one row in the process's own SQLite.
While Redis is unreachable (the limiter counting in memory), a cached key is reused
for at most SOCIALPUB_API_KEY_CACHE_SECONDS, as before the revision existed.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from redis import Redis

from socialpub import clock
from socialpub.principal import Principal

logger = logging.getLogger("socialpub.keys")

# The Redis key of the mirrored revision.
REVISION_KEY = "socialpub:api-key-revision"


@dataclass(frozen=True)
class Resolved:
    """A key's principal, and the key revision it was read under."""

    principal: Principal
    revision: int

    def current_at(self, revision: int | None) -> bool:
        """Still good at the current revision (None: not known, trusted until the
        cache entry expires)."""
        return revision is None or revision == self.revision


class PrincipalCache:
    MAX_ENTRIES = 10_000

    def __init__(self):
        self._entries: dict[str, tuple[Resolved, float]] = {}
        self._lock = threading.Lock()

    def get(self, key_hash: str) -> Resolved | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[1] < clock.monotonic():
            return None
        return entry[0]

    def put(self, key_hash: str, resolved: Resolved, ttl: float) -> None:
        with self._lock:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            self._entries[key_hash] = (resolved, clock.monotonic() + ttl)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


principal_cache = PrincipalCache()


# Sets the mirrored revision unless it is already as new: two revocations committed
# in one order may publish in the other.
_PUBLISH_SCRIPT = """
local current = tonumber(redis.call('get', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > current then
    redis.call('set', KEYS[1], ARGV[1])
end
return 1
"""


class RedisKeyRevision:
    """The key revision mirrored in Redis, where the rate-limit script reads it."""

    def __init__(self, url: str, **redis_options):
        self._redis = Redis.from_url(url, **redis_options)
        self._publish = self._redis.register_script(_PUBLISH_SCRIPT)

    def publish(self, revision: int) -> None:
        self._publish(keys=[REVISION_KEY], args=[revision])


_channels: dict[str, RedisKeyRevision] = {}


def install_channel(url: str, **redis_options) -> None:
    """Where this process publishes the revisions it commits: the Redis of its rate
    limits (the app, the CLI). Once per URL."""
    if url not in _channels:
        _channels[url] = RedisKeyRevision(url, **redis_options)


def publish_to(settings) -> None:
    """Has this process publish the key revisions it commits to the Redis its rate
    limits read them from (nothing to do without Redis)."""
    if settings.redis_url:
        install_channel(
            settings.redis_url, socket_connect_timeout=settings.redis_connect_timeout_seconds,
            socket_timeout=settings.redis_socket_timeout_seconds,
        )


def revision_moved(revision: int) -> None:
    """After a commit that moved the key revision: this process drops its cached keys
    at once, and the others learn it through the channels (Redis). A channel that
    cannot be reached is logged: those processes then reuse a cached key for at most
    the cache's lifetime."""
    principal_cache.clear()
    for channel in list(_channels.values()):
        try:
            channel.publish(revision)
        except Exception:  # noqa: BLE001 - the revocation itself is committed
            logger.warning("could not publish the API key revision to Redis", exc_info=True)
