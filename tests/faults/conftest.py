"""Services of the fault tests' own, which they stop, freeze and kill: never the
machine's Redis or PostgreSQL."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import TimeoutError as FutureTimeout

import pytest
from redis import Redis

from socialpub.app import create_app
from tests.support import backends
from tests.support.processes import free_port
from tests.support.settings import test_settings
from workers import context as job_context


class PrivateRedis:
    """A redis-server on a free port, without persistence, that the test may freeze
    (SIGSTOP: it accepts connections and answers nothing), thaw and kill."""

    def __init__(self, log_path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.client()

    def client(self) -> Redis:
        """A client of this server, once it answers (within 10 s)."""
        connection = Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                connection.ping()
                return connection
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.05)

    def freeze(self):
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self):
        os.kill(self.process.pid, signal.SIGCONT)

    def answer_within(self, pool, seconds: float, what: str, call, *args, **kwargs):
        """`call(*args, **kwargs)` run on `pool`: its result and how long it took, or a
        failure naming `what` when it takes over `seconds`. A call held past them is
        let go (this server killed) before the failure, so the test ends cleanly."""
        started = time.monotonic()
        pending = pool.submit(call, *args, **kwargs)
        try:
            result = pending.result(timeout=seconds)
        except FutureTimeout:
            self.kill()
            pending.result(timeout=30)
            raise AssertionError(f"{what} took over {seconds} s") from None
        return result, time.monotonic() - started

    def kill(self):
        if self.process.poll() is None:
            # A frozen process is killed all the same.
            self.process.kill()
            self.process.wait(timeout=10)

    def close(self):
        self.kill()
        self.log.close()


@pytest.fixture
def private_redis(tmp_path):
    if shutil.which("redis-server") is None:
        backends.unavailable("redis-server is not installed")
    redis = PrivateRedis(tmp_path / "redis.log")
    try:
        yield redis
    finally:
        redis.close()


@pytest.fixture
def app_on_private_redis(database_url, db, private_redis):
    """Builds an app whose Redis is the private server, with the settings given; the
    job context the app installs is put back afterwards."""
    saved = (job_context._database, job_context._queue, job_context._settings)
    built = []

    def build(**settings):
        application = create_app(test_settings(database_url, private_redis.url, **settings), database=db)
        built.append(application)
        return application

    yield build
    for application in built:
        application.app.extensions["socialpub"].queue.close()
    job_context._database, job_context._queue, job_context._settings = saved
