"""Periodic work: every interval, hand each due job function to the queue.

`socialpub serve` runs it beside the API on the embedded default; `socialpub worker`
runs it beside the RQ worker. Jobs are idempotent, so two schedulers (two worker
processes) enqueueing the same job only repeat harmless work.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

logger = logging.getLogger("socialpub.scheduler")


@dataclass(frozen=True)
class PeriodicJob:
    function_path: str
    every_seconds: float
    # Run in the scheduler's own thread rather than through the queue: the
    # dispatcher is a short database claim, and it must keep running when the
    # queue is down (what it claims comes back when its lease runs out).
    in_scheduler: bool = False


def standard_jobs(settings) -> tuple[PeriodicJob, ...]:
    return (
        PeriodicJob("workers.jobs.dispatch_due", settings.dispatch_interval_seconds, in_scheduler=True),
        # Short, and must run while the queue is down, as the dispatcher must.
        PeriodicJob("workers.jobs.resume_bulk_operations", 5.0, in_scheduler=True),
        PeriodicJob("workers.jobs.purge_expired_key_secrets", 3600.0),
        PeriodicJob("workers.jobs.purge_expired_idempotency_records", 3600.0),
        # Short database claims, like the dispatcher: outbox events keep turning into
        # deliveries while the queue is down, and claims it refused are given back.
        PeriodicJob("workers.jobs.fan_out_webhook_events", settings.webhook_dispatch_interval_seconds, in_scheduler=True),
        PeriodicJob("workers.jobs.dispatch_webhook_deliveries", settings.webhook_dispatch_interval_seconds, in_scheduler=True),
    )


class PeriodicScheduler:
    def __init__(self, queue, jobs, tick_seconds: float = 1.0):
        self.queue = queue
        self.jobs = tuple(jobs)
        self.tick_seconds = tick_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_run = {job: 0.0 for job in self.jobs}
        self._failing: set[PeriodicJob] = set()

    def run_due(self, now: float | None = None) -> list[str]:
        now = time.monotonic() if now is None else now
        started = []
        for job in self.jobs:
            if now >= self._next_run[job]:
                self._next_run[job] = now + job.every_seconds
                try:
                    if job.in_scheduler:
                        from workers.queue import resolve

                        resolve(job.function_path)()
                    else:
                        self.queue.enqueue(job.function_path)
                    started.append(job.function_path)
                    if job in self._failing:
                        self._failing.discard(job)
                        logger.warning("periodic job recovered", extra={"job": job.function_path})
                except Exception:  # noqa: BLE001 - a failure must not stop the loop
                    # The full story once per outage, not once a tick.
                    if job in self._failing:
                        logger.debug("periodic job still failing", extra={"job": job.function_path})
                    else:
                        self._failing.add(job)
                        logger.exception("periodic job failed", extra={"job": job.function_path})
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
