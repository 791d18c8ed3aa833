"""Periodic work (cross-cutting): every interval, hand each due job to the queue.

The jobs are the ones the areas register with `@periodic` in their `jobs.py`.

`socialpub serve` runs it beside the API on the embedded default; `socialpub worker`
runs it beside the RQ worker. Jobs are idempotent, so two schedulers (two worker
processes) enqueueing the same job only repeat harmless work.
"""
from __future__ import annotations

import logging
import threading

from socialpub import clock
from workers.registry import Periodic, periodic_jobs

logger = logging.getLogger("socialpub.scheduler")


class PeriodicScheduler:
    def __init__(self, queue, settings, jobs: tuple[Periodic, ...] | None = None, tick_seconds: float = 1.0):
        self.queue = queue
        self.jobs = tuple(periodic_jobs() if jobs is None else jobs)
        self.intervals = {job: job.interval(settings) for job in self.jobs}
        self.tick_seconds = tick_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_run = {job: 0.0 for job in self.jobs}
        self._failing: set[Periodic] = set()

    def run_due(self, now: float | None = None) -> list[str]:
        now = clock.monotonic() if now is None else now
        started = []
        for job in self.jobs:
            if now >= self._next_run[job]:
                self._next_run[job] = now + self.intervals[job]
                try:
                    if job.in_scheduler:
                        job.function()
                    else:
                        self.queue.enqueue(job.function)
                    started.append(job.name)
                    if job in self._failing:
                        self._failing.discard(job)
                        logger.warning("periodic job recovered", extra={"job": job.name})
                except Exception:  # noqa: BLE001 - a failure must not stop the loop
                    # The full story once per outage, not once a tick.
                    if job in self._failing:
                        logger.debug("periodic job still failing", extra={"job": job.name})
                    else:
                        self._failing.add(job)
                        logger.exception("periodic job failed", extra={"job": job.name})
        return started

    def start(self) -> "PeriodicScheduler":
        def loop():
            while True:
                self.run_due()
                if self._stop.wait(self.tick_seconds):
                    return

        self._thread = threading.Thread(target=loop, name="socialpub-scheduler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
