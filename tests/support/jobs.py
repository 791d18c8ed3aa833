"""The job queue the tests' apps use on the embedded backend."""
from __future__ import annotations

import logging

from workers.queue import InlineQueue
from workers.registry import path_of, resolve

logger = logging.getLogger("socialpub.jobs")


class HeldQueue(InlineQueue):
    """An inline queue that holds its jobs until the test drains it, then runs them
    in the test's own thread: a test's database is one connection, which a job on
    another thread must not share with the request or the test's teardown."""

    def __init__(self):
        super().__init__(workers=1)
        self.held: list[tuple[object, tuple, dict, str | None]] = []

    def enqueue(self, function, *args, job_id: str | None = None, **kwargs):
        # Only a registered job may be queued: an RQ worker finds jobs by their path.
        resolve(path_of(function))
        self.held.append((function, args, kwargs, job_id))

    def waiting_job_ids(self) -> list[str | None]:
        return [job_id for _, _, _, job_id in self.held]

    def drain(self, timeout: float = 30.0) -> None:
        """Runs every held job, and the jobs they queue, in order."""
        while self.held:
            function, args, kwargs, job_id = self.held.pop(0)
            try:
                function(*args, **kwargs)
            except Exception:
                logger.exception("job failed", extra={"job": path_of(function), "job_id": job_id})
