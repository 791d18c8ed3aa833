"""Real processes for the tests that need them: an app server (uvicorn) and
`socialpub worker` processes, each on its own log file and stopped at the end. A
pytest plugin (tests/conftest.py): the `workers` fixture starts workers against the
test's own PostgreSQL database (`crash_database_url`, tests/support/databases.py)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support import backends

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The installed `socialpub` command beside this interpreter (.venv/bin/socialpub).
_SCRIPT = Path(sys.executable).parent / "socialpub"
WORKER_COMMAND = [str(_SCRIPT), "worker"] if _SCRIPT.exists() else [sys.executable, "-m", "socialpub.cli", "worker"]
# Short leases and a quick dispatcher: a killed worker's work is taken over in seconds.
WORKER_ENV = {
    "SOCIALPUB_PUBLISH_LEASE_SECONDS": "5",
    "SOCIALPUB_DISPATCH_INTERVAL_SECONDS": "0.2",
    "SOCIALPUB_LOG_LEVEL": "WARNING",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_BIN = Path(sys.executable).parent


def _uvicorn(port: int) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "--factory", "socialpub.app:create_app",
            "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]


def _serve(port: int) -> list[str]:
    return [str(_BIN / "socialpub"), "serve", "--host", "127.0.0.1", "--port", str(port)]


def _gunicorn(port: int) -> list[str]:
    if not (_BIN / "gunicorn").exists():
        backends.unavailable("gunicorn is not installed")
    return [str(_BIN / "gunicorn"), "-k", "socialpub.server.Worker", "-w", "1", "-b", f"127.0.0.1:{port}",
            "--keep-alive", "30", "socialpub.app:create_app()"]


# The servers the README documents (`socialpub serve`, gunicorn with socialpub's
# worker class) and plain uvicorn, each a command line for a port.
SERVER_COMMANDS = {"uvicorn": _uvicorn, "serve": _serve, "gunicorn": _gunicorn}


class Server:
    """One server process (SERVER_COMMANDS, or `command(port)`) serving the app with
    the given environment, in a session of its own: gunicorn's master and its workers
    are stopped together."""

    def __init__(self, env: dict, log_path: Path, *, kind: str = "uvicorn", command=None):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            (command or SERVER_COMMANDS[kind])(self.port),
            cwd=PROJECT_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited with {self.process.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"server on port {self.port} not ready after {timeout}s:\n{self.output()}")

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if self.process.poll() is not None:
                break
            try:
                os.killpg(self.process.pid, sig)
                self.process.wait(timeout=wait)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.log.close()


class Worker:
    """One `socialpub worker` process, in a session of its own so that anything it
    starts goes with it."""

    def __init__(self, name: str, env: dict, log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                WORKER_COMMAND, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self, size: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-size:]

    def crash(self) -> None:
        """SIGKILL: no cleanup, whatever it was doing is cut short."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM (a warm shutdown), SIGKILL if it does not stop in time. Signals go
        to its process group only while it is alive (its id is not reused until then)."""
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if self.process.poll() is not None:
                return
            try:
                os.killpg(self.process.pid, sig)
                self.process.wait(timeout=wait)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass


@pytest.fixture
def workers(tmp_path, crash_database_url):
    """Starts workers against the test's database and a given Redis; stops them all."""
    started: list[Worker] = []

    def start(name: str, redis_url: str, **settings: str) -> Worker:
        env = {**os.environ, **WORKER_ENV, **settings, "DATABASE_URL": crash_database_url, "REDIS_URL": redis_url}
        env.pop("SOCIALPUB_QUEUE_BACKEND", None)
        worker = Worker(name, env, tmp_path)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_registered(redis_url: str, count: int, started: list[Worker], timeout: float = 30) -> None:
    """Until `count` RQ workers are registered with this Redis."""
    from redis import Redis
    from rq import Worker as RQWorker

    connection = Redis.from_url(redis_url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for worker in started:
                assert worker.alive, f"{worker.name} exited:\n{worker.output()}"
            if RQWorker.count(connection=connection) >= count:
                return
            time.sleep(0.1)
    finally:
        connection.close()
    raise AssertionError(f"{count} workers did not register within {timeout} s")
