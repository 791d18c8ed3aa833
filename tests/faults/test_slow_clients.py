"""Slow clients cannot hold the server's connections. uvicorn alone never closed a
connection whose request was never finished (half a request line, headers dripped
a byte at a time, a declared body never sent): a few hundred such clients exhausted
a worker. The production server (socialpub.server: `socialpub serve` and gunicorn's
`-k socialpub.server.Worker`) closes them once the header or body read deadline
passes, and serves complete requests as before. Real server processes, small
deadlines."""
from __future__ import annotations

import os
import socket
import sys
import time

import httpx
import pytest

from persistence.migrate import upgrade
from tests.support.processes import Server

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.5
# The h11 parser (the fallback when httptools is not installed), under the same deadlines.
H11_SERVER = (
    "import sys, uvicorn\n"
    "from socialpub.app import create_app\n"
    "from socialpub.config import Settings\n"
    "from socialpub.server import H11DeadlineProtocol, http_protocol\n"
    "settings = Settings.from_env()\n"
    "uvicorn.run(create_app(settings), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning',\n"
    "            http=http_protocol(settings, base=H11DeadlineProtocol))\n"
)

pytestmark = pytest.mark.slow


def server_env(tmp_path) -> dict:
    database_url = f"sqlite:///{tmp_path / 'server.db'}"
    upgrade(database_url)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SOCIALPUB_QUEUE_BACKEND": "inline",
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "SOCIALPUB_HEADER_READ_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
        "SOCIALPUB_BODY_READ_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
    }
    env.pop("REDIS_URL", None)
    return env


@pytest.fixture(scope="module", params=["serve", "h11"])
def server(request, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp(f"slow-{request.param}")
    h11 = (lambda port: [sys.executable, "-c", H11_SERVER, str(port)]) if request.param == "h11" else None
    started = Server(server_env(tmp_path), tmp_path / "server.log", kind="serve", command=h11)
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


def closed_after(port: int, send, limit: float) -> float:
    """Seconds until the server closed the connection (it may answer first), while
    `send(connection)` runs; fails past `limit`."""
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as connection:
        started = time.monotonic()
        send(connection)
        connection.settimeout(max(0.01, limit - (time.monotonic() - started)))
        try:
            while connection.recv(65536):
                pass
        except ConnectionResetError:
            pass
        except TimeoutError:
            pytest.fail(f"the connection was still open after {limit} s")
        return time.monotonic() - started


def test_half_a_request_line_is_closed(server):
    elapsed = closed_after(server.port, lambda c: c.sendall(b"GET /api/v1/po"), HEADER_TIMEOUT + 1)
    assert elapsed >= HEADER_TIMEOUT - 0.1


def test_a_connection_that_sends_nothing_is_closed(server):
    closed_after(server.port, lambda c: None, HEADER_TIMEOUT + 1)


def test_headers_dripped_slower_than_the_deadline_are_closed(server):
    def drip(connection):
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        # Each byte well within the deadline, the whole header block not.
        for _ in range(int(HEADER_TIMEOUT / 0.2) + 5):
            try:
                connection.sendall(b"X-A: b\r\n")
            except (BrokenPipeError, ConnectionResetError):
                return
            time.sleep(0.2)

    elapsed = closed_after(server.port, drip, HEADER_TIMEOUT + 3)
    assert elapsed < HEADER_TIMEOUT + 1.5


@pytest.mark.parametrize("path", ["/api/v1/posts", "/dashboard/sign-in"], ids=["api", "dashboard-form"])
def test_a_declared_body_never_sent_is_closed(server, path):
    def stall(connection):
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n".encode()
            + b"Content-Length: 100\r\n\r\nemail=a"
        )

    # Closed by the body deadline (later than the header one), whether or not the app
    # answered first without reading the body (the API refuses a request without a key).
    elapsed = closed_after(server.port, stall, BODY_TIMEOUT + 1)
    assert elapsed >= BODY_TIMEOUT - 0.1


def test_a_second_request_on_a_kept_alive_connection_has_its_own_deadline(server):
    def two(connection):
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert connection.recv(65536).startswith(b"HTTP/1.1 200")
        connection.sendall(b"GET /heal")

    elapsed = closed_after(server.port, two, HEADER_TIMEOUT + 1)
    assert elapsed >= HEADER_TIMEOUT - 0.1


def test_complete_requests_are_served(server):
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=5) as client:
        assert client.get("/healthz").status_code == 200
        # A body sent a little late, within the deadline, is read.
        response = client.post("/api/v1/posts", content=b'{"content": "hi"}', headers={"Content-Type": "application/json"})
        assert response.status_code == 401
        # The connection is kept alive across requests and their deadlines.
        time.sleep(HEADER_TIMEOUT + 0.3)
        assert client.get("/healthz").status_code == 200


def test_the_gunicorn_worker_closes_slow_clients(tmp_path):
    started = Server(server_env(tmp_path), tmp_path / "gunicorn.log", kind="gunicorn")
    try:
        started.wait_ready()
        elapsed = closed_after(started.port, lambda c: c.sendall(b"GET /api/v1/po"), HEADER_TIMEOUT + 1)
        assert elapsed >= HEADER_TIMEOUT - 0.1
        assert httpx.get(f"{started.base_url}/healthz", timeout=5).status_code == 200
    finally:
        started.stop()


def test_unreadable_requests_are_still_answered_in_the_envelope(server):
    # socialpub.error_handlers replaces uvicorn's text/plain 400 on the parent classes.
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")
        raw = b""
        while chunk := connection.recv(65536):
            raw += chunk
    assert raw.startswith(b"HTTP/1.1 400")
    assert b"application/json" in raw.lower() and b'"validation_error"' in raw
