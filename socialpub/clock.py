"""The one clock seam (cross-cutting).

Everything that asks what time it is, or how long something took, asks here:
`now()` for wall-clock UTC timestamps, `monotonic()` for intervals, `sleep()` for
waits. Tests install a `FakeClock` and move it forward instead of sleeping.
"""
from __future__ import annotations

import datetime as dt
import threading
import time
from contextlib import contextmanager


class SystemClock:
    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class FakeClock:
    """A clock that moves only when told to. `sleep()` moves it at once, so code that
    waits finishes without waiting; threads see the same time."""

    def __init__(self, start: dt.datetime | None = None):
        self._now = start or dt.datetime.now(dt.timezone.utc)
        self._monotonic = 1_000_000.0
        self._lock = threading.Lock()

    def now(self) -> dt.datetime:
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        with self._lock:
            return self._monotonic

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += dt.timedelta(seconds=seconds)
            self._monotonic += seconds

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)


_clock: SystemClock | FakeClock = SystemClock()


def now() -> dt.datetime:
    return _clock.now()


def monotonic() -> float:
    return _clock.monotonic()


def sleep(seconds: float) -> None:
    _clock.sleep(seconds)


@contextmanager
def installed(clock):
    """Runs the block with `clock` as the process's clock."""
    global _clock
    previous, _clock = _clock, clock
    try:
        yield clock
    finally:
        _clock = previous
