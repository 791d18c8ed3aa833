"""Services of the fault tests' own, which they stop, freeze and kill: never the
machine's Redis or PostgreSQL."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from pathlib import Path

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

    @contextmanager
    def calls_let_go(self, application=None, *, threads: int = 1):
        """A pool to make calls from (answer_within) and, given an app, a client of it.
        On the way out this server is killed first, which lets go of any call still
        waiting on it frozen, before the client and the pool are closed."""
        pool = ThreadPoolExecutor(threads)
        client = application.test_client() if application is not None else None
        if client is not None:
            client.__enter__()
        try:
            yield client, pool
        finally:
            self.kill()
            if client is not None:
                client.__exit__(None, None, None)
            pool.shutdown(wait=False, cancel_futures=True)

    def kill(self):
        if self.process.poll() is None:
            # A frozen process is killed all the same.
            self.process.kill()
            self.process.wait(timeout=10)

    def close(self):
        self.kill()
        self.log.close()


def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


class PrivatePostgres:
    """A PostgreSQL cluster of its own (initdb) on a free port, that the test may
    freeze (every process of it SIGSTOPped: connections are accepted and nothing
    answers), thaw, stop at once (as a crash would) and start again. The server
    refuses to run as root, so under root it runs as the `postgres` user."""

    def __init__(self, directory):
        self.port = free_port()
        self.directory = directory
        self.data = directory / "data"
        self.log = directory / "postgres.log"
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres")
        self._run(_postgres_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self.start()

    def _run(self, *command):
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def start(self):
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.directory} "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self):
        """Stops it at once, without a checkpoint, as a crash would."""
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def _processes(self) -> list[int]:
        """The postmaster and its children (the backends and background workers)."""
        with open(self.data / "postmaster.pid") as pid_file:
            postmaster = int(pid_file.readline())
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(stat) as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.split("/")[2]))
        return [postmaster, *children]

    def freeze(self):
        self._signal(signal.SIGSTOP)

    def thaw(self):
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        for pid in self._processes():
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass  # a backend that ended since the list was read

    def close(self):
        if (self.data / "postmaster.pid").exists():
            self.thaw()
            self.stop()


@pytest.fixture
def private_postgres():
    if _postgres_bin("initdb") is None:
        backends.unavailable("PostgreSQL's initdb is not installed")
    # Not under pytest's temporary directory, which only its owner may enter.
    directory = Path(tempfile.mkdtemp(prefix="socialpub-faults-pg-"))
    try:
        postgres = PrivatePostgres(directory)
        try:
            yield postgres
        finally:
            postgres.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


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
