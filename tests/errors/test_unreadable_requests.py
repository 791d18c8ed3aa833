"""Requests the HTTP server cannot parse are answered in the envelope too. Raw bytes
outside ASCII in the request target (which must be percent-encoded) name no route:
404 resource_not_found, as an unknown path is. Anything else that is not HTTP/1.1
(a malformed header line) is 400 in the envelope. uvicorn answered both with a
plain-text 400 of its own, before any application code ran; the protocols of the
documented servers (socialpub.server) answer in the envelope."""
from __future__ import annotations

import asyncio
import os
import socket

import httpx
import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from persistence.migrate import upgrade
from socialpub.server import H11DeadlineProtocol, HttpToolsDeadlineProtocol
from tests.support.errors import assert_envelope
from tests.support.processes import Server

RAW_PATHS = [b"/api/v1/posts/\xc3\xa9", b"/api/v1/po\xffsts", b"/api/v1/posts?status=\xc3\xa9", b"/dashboard/\xe2\x82\xac"]
MALFORMED_HEADER = b"GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"


def request(target: bytes) -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def parsed(raw: bytes) -> httpx.Response:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(part.strip() for part in line.split(":", 1)) for line in header_lines]
    response = httpx.Response(int(status_line.split()[1]), headers=headers, content=body)
    assert int(response.headers["content-length"]) == len(body)
    return response


class Transport(asyncio.Transport):
    def __init__(self):
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data):
        self.written += bytes(data)

    def close(self):
        self.closed = True

    def is_closing(self):
        return self.closed

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(name, default)


def answer(protocol_class, data: bytes, app) -> httpx.Response:
    async def exchange():
        config = Config(app=app, log_level="critical")
        protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
        transport = Transport()
        protocol.connection_made(transport)
        protocol.data_received(data)
        assert transport.closed
        return transport.written

    return parsed(asyncio.run(exchange()))


@pytest.mark.parametrize("protocol_class", [HttpToolsDeadlineProtocol, H11DeadlineProtocol], ids=["httptools", "h11"])
class TestInProcess:
    @pytest.mark.parametrize("target", RAW_PATHS)
    def test_raw_bytes_in_the_target_are_404_in_the_envelope(self, app, protocol_class, target):
        response = answer(protocol_class, request(target), app)
        body = assert_envelope(response, 404, "resource_not_found")
        assert "percent-encode" in body["error"]["message"]

    def test_other_malformed_requests_are_400_in_the_envelope(self, app, protocol_class):
        response = answer(protocol_class, MALFORMED_HEADER, app)
        assert_envelope(response, 400, "validation_error")


@pytest.mark.slow
def test_a_real_server_answers_in_the_envelope(tmp_path):
    database_url = f"sqlite:///{tmp_path / 'server.db'}"
    upgrade(database_url)
    server = Server(
        {**os.environ, "DATABASE_URL": database_url, "SOCIALPUB_QUEUE_BACKEND": "inline"}, tmp_path / "server.log", kind="serve"
    )
    try:
        server.wait_ready()
        for data, status in [(request(target), 404) for target in RAW_PATHS] + [(MALFORMED_HEADER, 400)]:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
                connection.sendall(data)
                raw = b""
                while chunk := connection.recv(65536):
                    raw += chunk
            response = parsed(raw)
            assert_envelope(response, status, "resource_not_found" if status == 404 else "validation_error")
        # The server goes on serving.
        assert httpx.get(f"{server.base_url}/api/v1/posts", timeout=5).status_code == 401
    finally:
        server.stop()
