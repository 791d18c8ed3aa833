"""The queue's Redis going away. A `socialpub worker` whose Redis was down for a
while takes jobs again within seconds of it coming back (RQ's own back-off would
wait up to a minute); an API request that enqueues against a Redis that accepts
connections and never answers (frozen with SIGSTOP) is answered within the queue
client's deadlines, the work left to the sweeper. The Redis is the test's own
(tests/faults/conftest.py)."""
from __future__ import annotations

import os
import subprocess
import time
import uuid

import pytest
from rq.job import JobStatus

from persistence.bulk import BulkOperation
from persistence.migrate import upgrade
from socialpub.config import Settings
from socialpub.keys.jobs import purge_expired_key_secrets
from tests.support.bulk import new_post, start
from tests.support.factories import make_key
from tests.support.processes import WORKER_ENV, Worker, wait_registered
from workers.queue import RQQueue, make_queue

BACK_WITHIN = 5.0  # seconds from Redis answering again to a job done
DOWN_FOR = 8.0  # long enough for RQ's uncapped back-off to reach 8 s between tries
DEADLINE = 2.0  # seconds a request may take against a frozen Redis


def restart(redis) -> None:
    """A new redis-server on the same port (empty: it keeps nothing on disk); the
    fixture kills it at the end as it would the first."""
    redis.process = subprocess.Popen(
        ["redis-server", "--port", str(redis.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=redis.log,
        stderr=subprocess.STDOUT,
    )
    redis.client().close()


@pytest.fixture
def worker(tmp_path, private_redis):
    database_url = f"sqlite:///{tmp_path / 'worker.db'}"
    upgrade(database_url)
    env = {**os.environ, **WORKER_ENV, "DATABASE_URL": database_url, "REDIS_URL": private_redis.url}
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    started = Worker("worker", env, tmp_path)
    try:
        wait_registered(private_redis.url, 1, [started])
        yield started
    finally:
        started.stop()


def test_a_worker_takes_jobs_within_seconds_of_redis_coming_back(worker, private_redis):
    private_redis.kill()
    time.sleep(DOWN_FOR)
    assert worker.alive, worker.output()

    restart(private_redis)
    back_at = time.monotonic()
    queue = RQQueue(private_redis.url)
    try:
        job = queue.enqueue(purge_expired_key_secrets)
        while job.get_status(refresh=True) != JobStatus.FINISHED:
            assert job.get_status() != JobStatus.FAILED, worker.output()
            assert time.monotonic() - back_at < BACK_WITHIN, (
                f"job still {job.get_status()} {BACK_WITHIN} s after Redis came back:\n{worker.output()}"
            )
            time.sleep(0.05)
        assert job.return_value() == 0
    finally:
        queue.close()
    assert worker.alive, worker.output()


@pytest.fixture
def rq_app(app_on_private_redis):
    return app_on_private_redis(queue_backend="rq")


def test_an_enqueueing_request_is_not_held_by_a_frozen_redis(rq_app, session, workspace, private_redis):
    key = make_key(session, workspace)
    with private_redis.calls_let_go(rq_app) as (client, pool):
        post_id = new_post(client, key)
        private_redis.freeze()
        response, elapsed = private_redis.answer_within(
            pool, DEADLINE, "the request", start, client, key, action="archive", postIds=[post_id]
        )
        assert elapsed < DEADLINE
        # The operation is stored and left for the sweeper, which queues it once Redis answers.
        assert response.status_code == 202, response.text
        operation_id = response.json()["data"]["id"]
        session.expire_all()
        operation = session.get(BulkOperation, uuid.UUID(operation_id))
        assert operation is not None and operation.lease_until is None


def test_the_queue_deadlines_are_settings(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_REDIS_CONNECT_TIMEOUT_SECONDS", "0.2")
    monkeypatch.setenv("SOCIALPUB_REDIS_SOCKET_TIMEOUT_SECONDS", "0.3")
    settings = Settings.from_env(queue_backend="rq", redis_url="redis://127.0.0.1:1/0")
    assert (settings.redis_connect_timeout_seconds, settings.redis_socket_timeout_seconds) == (0.2, 0.3)
    queue = make_queue(settings)
    try:
        options = queue.connection.connection_pool.connection_kwargs
        assert (options["socket_connect_timeout"], options["socket_timeout"]) == (0.2, 0.3)
    finally:
        queue.close()
    defaults = Settings()
    # Together well under a request's 2 s: an enqueue against a frozen Redis gives up within them.
    assert defaults.redis_connect_timeout_seconds + defaults.redis_socket_timeout_seconds <= 1.0
