"""The job queue the tests' apps use on the embedded backend."""
from __future__ import annotations

import logging

from workers.queue import InlineQueue, resolve

logger = logging.getLogger("socialpub.jobs")


class HeldQueue(InlineQueue):
    """An inline queue that holds its jobs until the test drains it, then runs them
    in the test's own thread: a test's database is one connection, which a job on
    another thread must not share with the request or the test's teardown."""

    def __init__(self):
        super().__init__(workers=1)
        self.held: list[tuple[str, tuple, dict, str | None]] = []

    def enqueue(self, function_path: str, *args, job_id: str | None = None, **kwargs):
        resolve(function_path)  # a job that names no function fails when queued, as it would inline
        self.held.append((function_path, args, kwargs, job_id))

    def waiting_job_ids(self) -> list[str | None]:
        return [job_id for _, _, _, job_id in self.held]

    def drain(self, timeout: float = 30.0) -> None:
        """Runs every held job, and the jobs they queue, in order."""
        while self.held:
            function_path, args, kwargs, job_id = self.held.pop(0)
            try:
                resolve(function_path)(*args, **kwargs)
            except Exception:
                logger.exception("job failed", extra={"job": function_path, "job_id": job_id})
