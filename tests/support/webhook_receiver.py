"""A webhook receiver on 127.0.0.1 for the tests that need one (webhooks, dashboard,
browser): answers each request as the test scripts it and checks every delivery's
signature with the endpoint's secret, in constant time (the service's own
verify_signature, which receivers are told to use). A pytest plugin
(tests/conftest.py): the `receiver` fixture is one running for the test."""
from __future__ import annotations

import http.server
import json
import threading
import time
from dataclasses import dataclass, field

import pytest

from socialpub.webhooks import signing


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    verified: bool

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    delay: float = 0.0
    location: str | None = None
    body: bytes = b"ok"
    drip: float = 0.0  # seconds between the body's bytes, each sent on its own
    headers: dict = field(default_factory=dict)


@dataclass
class Receiver:
    """Answers each request with the next scripted Answer (the last one repeats) and
    checks every signature with the endpoint's secret, in constant time."""

    url: str = ""
    secret: str | None = None
    answers: list[Answer] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *answers: Answer) -> None:
        with self.lock:
            self.answers = list(answers)

    def _next(self) -> Answer:
        with self.lock:
            if len(self.answers) > 1:
                return self.answers.pop(0)
            return self.answers[0] if self.answers else Answer()

    def handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, body: bytes):
                answer = receiver._next()
                verified = receiver.secret is not None and signing.verify_signature(
                    receiver.secret, self.headers.get("X-Service-Signature"), body
                )
                with receiver.lock:
                    receiver.received.append(Received(self.path, dict(self.headers), body, verified))
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    if answer.location:
                        self.send_header("Location", answer.location)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    if answer.drip:
                        for byte in answer.body:
                            self.wfile.write(bytes([byte]))
                            time.sleep(answer.drip)
                    else:
                        self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as it should

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self._answer(self.rfile.read(length))

            def do_GET(self):
                self._answer(b"")

        return Handler

    def __enter__(self) -> "Receiver":
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with Receiver() as running:
        yield running
