"""One queue interface, two backends (cross-cutting): RQ on Redis (production) and an
in-process thread pool (the embedded default). Both run the same job functions,
enqueued by reference; RQ carries each one's import path to the worker process."""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Protocol

from workers.registry import path_of

logger = logging.getLogger("socialpub.jobs")


class JobQueue(Protocol):
    name: str

    def enqueue(self, function: Callable, *args, job_id: str | None = None, **kwargs): ...

    def waiting_job_ids(self) -> list[str | None]:
        """The ids of the jobs waiting to be started (None for a job without one)."""
        ...

    def close(self) -> None: ...


class InlineQueue:
    """Runs jobs on a thread pool in this process. Failures are logged, as an RQ
    worker would record them."""

    name = "inline"

    def __init__(self, workers: int = 4):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="socialpub-job")
        self._pending: set[Future] = set()
        self._waiting: dict[object, str | None] = {}
        self._lock = threading.Lock()

    def enqueue(self, function: Callable, *args, job_id: str | None = None, **kwargs) -> Future:
        entry = object()

        def run():
            with self._lock:
                self._waiting.pop(entry, None)
            try:
                return function(*args, **kwargs)
            except Exception:
                logger.exception("job failed", extra={"job": path_of(function), "job_id": job_id})
                raise

        with self._lock:
            self._waiting[entry] = job_id
        try:
            future = self._pool.submit(run)
        except BaseException:
            with self._lock:
                self._waiting.pop(entry, None)
            raise
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

    def waiting_job_ids(self) -> list[str | None]:
        with self._lock:
            return list(self._waiting.values())

    def drain(self, timeout: float = 30.0) -> None:
        """Waits until every job, including jobs that jobs enqueued, has finished."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                pending = list(self._pending)
            if not pending:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{len(pending)} jobs still running")
            wait(pending, timeout=remaining)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class RQQueue:
    """Jobs on Redis, for RQ workers. The client has connect and socket deadlines
    (settings redis_connect_timeout_seconds/redis_socket_timeout_seconds) and no
    retries: a Redis that accepts connections and never answers fails an enqueue
    within them, and the caller (a request, the dispatcher) leaves the work to its
    sweeper rather than wait. A connection the server closed (Redis restarted) is
    noticed when it is taken from the pool and opened again, so needs no retry."""

    name = "rq"

    def __init__(
        self,
        redis_url: str,
        queue_name: str = "default",
        *,
        connect_timeout: float | None = None,
        timeout: float | None = None,
    ):
        from redis import Redis
        from rq import Queue

        self.connection = Redis.from_url(redis_url, socket_connect_timeout=connect_timeout, socket_timeout=timeout)
        self.queue = Queue(queue_name, connection=self.connection)

    def enqueue(self, function: Callable, *args, job_id: str | None = None, **kwargs):
        return self.queue.enqueue_call(func=path_of(function), args=args, kwargs=kwargs, job_id=job_id)

    def waiting_job_ids(self) -> list[str | None]:
        return self.queue.get_job_ids()

    def close(self) -> None:
        self.connection.close()


class AfterCommitQueue:
    """A queue whose jobs wait until the unit of work that enqueued them has committed
    (`release`), or are dropped with it (`drop`): a job must never look for a row its
    caller has not committed yet. A request whose every change commits at its end
    (socialpub.request, an Idempotency-Key request) hands its services this. A job the
    queue refuses at release is logged; its claim comes back when its lease runs out."""

    def __init__(self, queue: JobQueue):
        self.queue = queue
        self.name = queue.name
        self._held: list[tuple[Callable, tuple, dict, str | None]] = []

    def enqueue(self, function: Callable, *args, job_id: str | None = None, **kwargs) -> None:
        path_of(function)  # only a registered job may be queued, here as at release
        self._held.append((function, args, kwargs, job_id))

    def waiting_job_ids(self) -> list[str | None]:
        return self.queue.waiting_job_ids() + [job_id for _, _, _, job_id in self._held]

    def release(self) -> int:
        """Enqueues what was held, in order; returns how many the queue took."""
        held, self._held = self._held, []
        taken = 0
        for function, args, kwargs, job_id in held:
            try:
                self.queue.enqueue(function, *args, job_id=job_id, **kwargs)
                taken += 1
            except Exception:  # noqa: BLE001 - its lease brings the work back
                logger.warning("could not queue a job after its request committed", exc_info=True,
                               extra={"job": path_of(function), "job_id": job_id})
        return taken

    def drop(self) -> None:
        self._held.clear()

    def close(self) -> None:
        self.drop()


def make_queue(settings) -> JobQueue:
    if settings.queue_backend == "rq":
        if not settings.redis_url:
            raise ValueError("SOCIALPUB_QUEUE_BACKEND=rq needs REDIS_URL")
        return RQQueue(
            settings.redis_url,
            connect_timeout=settings.redis_connect_timeout_seconds,
            timeout=settings.redis_socket_timeout_seconds,
        )
    if settings.queue_backend == "inline":
        return InlineQueue(settings.inline_job_workers)
    raise ValueError(f"unknown queue backend {settings.queue_backend!r}")
