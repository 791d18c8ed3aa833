"""Resolved API keys (cross-cutting, part of authentication), reused for a few seconds so most requests skip the key lookup.

Only valid keys are cached (so unknown values cannot fill it); expiry and grace
deadlines are still checked on every use. Rolling or revoking a key clears this
process's cache at once; other processes see the change within the cache's lifetime
(SOCIALPUB_API_KEY_CACHE_SECONDS).
"""
from __future__ import annotations

import threading

from socialpub import clock
from socialpub.principal import Principal


class PrincipalCache:
    MAX_ENTRIES = 10_000

    def __init__(self):
        self._entries: dict[str, tuple[Principal, float]] = {}
        self._lock = threading.Lock()

    def get(self, key_hash: str) -> Principal | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[1] < clock.monotonic():
            return None
        return entry[0]

    def put(self, key_hash: str, principal: Principal, ttl: float) -> None:
        with self._lock:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            self._entries[key_hash] = (principal, clock.monotonic() + ttl)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


principal_cache = PrincipalCache()
