"""Writers at once: work on threads of its own against a database whose commits are
real (the `committed_database` fixture, tests/support/databases.py), for the tests of
what PostgreSQL's row locks, or SQLite's one writer, make of transactions that
overlap. What a writer raises is kept, under its name, and fails the test."""
from __future__ import annotations

import threading
from collections.abc import Callable


class Writers:
    """Threads started one by one (`start`), for tests that order their writers
    themselves; `finish` waits for them all."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, Exception]] = []
        self.threads: list[threading.Thread] = []

    def start(self, name: str, work: Callable[[], object]) -> threading.Thread:
        def run() -> None:
            try:
                work()
            except Exception as exc:  # noqa: BLE001 - reported by finish
                self.errors.append((name, exc))

        thread = threading.Thread(target=run, name=name)
        self.threads.append(thread)
        thread.start()
        return thread

    def finish(self, timeout: float) -> None:
        """Every writer joined (`timeout` seconds each, at most): none still running,
        none failed."""
        for thread in self.threads:
            thread.join(timeout)
        running = [thread.name for thread in self.threads if thread.is_alive()]
        assert not running, f"still running after {timeout} s: {running}"
        assert not self.errors, f"writers failed: {self.errors!r}"


def at_once(writers: dict[str, Callable[[], object]], *, timeout: float) -> None:
    """Each writer on a thread of its own, all let go at the same moment (a barrier),
    then finished (`Writers.finish`)."""
    barrier = threading.Barrier(len(writers))
    group = Writers()

    def together(work: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            barrier.wait(10)
            return work()

        return run

    for name, work in writers.items():
        group.start(name, together(work))
    group.finish(timeout)
