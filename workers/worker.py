"""The RQ worker process (cross-cutting): what `socialpub worker` runs on Redis.

It takes jobs from the `default` queue in this process, runs the periodic scheduler
beside them, and outlives Redis going away: it reconnects every few seconds until
Redis is back or the process is told to stop.
"""
from __future__ import annotations

import logging

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Queue, SimpleWorker
from sqlalchemy.orm import configure_mappers

from persistence.db import Database
from socialpub import announcements, clock, crypto, logs
from socialpub.config import Settings
from workers import context, registry
from workers.queue import RQQueue
from workers.scheduler import PeriodicScheduler

QUEUE_NAME = "default"
# The longest a worker waits between tries to reach a Redis that went away, in its
# own loop and in RQ's: once Redis is back, the worker takes jobs again within this.
RECONNECT_SECONDS = 2
# How long a worker's registration lives without a heartbeat. RQ waits for a job with
# a blocking pop of this less 15 s, and sets its connection's socket timeout 10 s
# above that: a Redis that stops answering without closing the connection (a network
# partition, a frozen server) is noticed within 15 s, where RQ's default (420) has
# the worker wait 7 minutes on it.
WORKER_TTL_SECONDS = 20

log = logging.getLogger("socialpub.worker")


def load_job_code() -> None:
    """Imports every area's jobs (and so everything a job reaches) and subscribers (the
    outbox builds its event schema as it subscribes) and builds the ORM mappers, so a
    worker pays for them once at start rather than in the first job it takes (which,
    for a bulk operation, added half of its run time)."""
    registry.load()
    announcements.load_subscribers()
    configure_mappers()


class Worker(SimpleWorker):
    """Remembers that it was asked to stop, which tells a stop from RQ leaving its
    loop on an error."""

    stop_requested = False
    # RQ backs off 1, 2, 4... seconds between tries while Redis is unreachable, up to
    # this (60 by default: a worker could sit out a minute after Redis came back).
    max_connection_wait_time = float(RECONNECT_SECONDS)

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)


def make_worker(connection: Redis) -> Worker:
    return Worker([Queue(QUEUE_NAME, connection=connection)], connection=connection, worker_ttl=WORKER_TTL_SECONDS)


def run(settings: Settings) -> None:
    """Runs until the process is told to stop. Needs `settings.redis_url`."""
    logs.configure(settings.log_level, settings.log_json)
    database = Database.from_settings(settings)
    # A worker that cannot read the account secrets would fail every target it takes.
    crypto.verify_keys(database)
    queue = RQQueue(
        settings.redis_url,
        queue_name=QUEUE_NAME,
        connect_timeout=settings.redis_connect_timeout_seconds,
        timeout=settings.redis_socket_timeout_seconds,
    )
    context.install(database, queue=queue, settings=settings)
    load_job_code()
    scheduler = PeriodicScheduler(queue, settings, tick_seconds=0.25).start()
    try:
        while True:
            try:
                # RQ raises the socket deadline of its own connection above its
                # blocking wait for jobs; connecting is bounded by ours.
                connection = Redis.from_url(
                    settings.redis_url,
                    socket_connect_timeout=settings.redis_connect_timeout_seconds,
                    socket_timeout=settings.redis_socket_timeout_seconds,
                )
                # Jobs are short database and HTTP calls: running them in this process
                # (no fork per job) is what makes thousands a minute possible. A job
                # killed with the process loses nothing: its target's lease runs out
                # and the dispatcher hands it out again. No RQ scheduler: nothing is
                # enqueued for later (the dispatcher above is the schedule), and its
                # forked process would outlive a worker that is killed.
                worker = make_worker(connection)
                worker.work(logging_level=settings.log_level)
                if worker.stop_requested:
                    return
                # RQ leaves its loop, without raising, on an error it did not expect,
                # such as Redis going away while a job's result is recorded.
                log.warning("the worker loop stopped; starting it again in %s seconds", RECONNECT_SECONDS)
            except (RedisConnectionError, RedisTimeoutError):
                log.warning("Redis unreachable; retrying in %s seconds", RECONNECT_SECONDS)
            clock.sleep(RECONNECT_SECONDS)
    finally:
        scheduler.stop()
