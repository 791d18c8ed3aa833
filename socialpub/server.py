"""The production HTTP server's protocol: uvicorn's, with deadlines for reading a
request (cross-cutting).

uvicorn bounds only the idle time between two requests on a kept-alive connection
(`timeout_keep_alive`). A client that connects and sends nothing, sends half a
request line, drips its headers a byte at a time, or declares a body and never
sends it holds its connection (and a file descriptor) for as long as it likes: a
few hundred such clients exhaust a worker. Here a request's headers must arrive
within `header_read_timeout_seconds` of the connection opening (or of the request's
first byte on a kept-alive connection), and its body within
`body_read_timeout_seconds` of the headers; past either the connection is closed.
Both are totals, not gaps between bytes, so dripping does not reset them.

Used by `socialpub serve` and, under gunicorn, by `-k socialpub.server.Worker`.
"""
from __future__ import annotations

import asyncio
import functools
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker

from socialpub import error_handlers
from socialpub.config import Settings

try:  # uvicorn's fast parser, there unless uvicorn was installed without [standard]
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover
    HttpToolsProtocol = None

logger = logging.getLogger("socialpub.server")

HEADERS = "headers"
BODY = "body"


class _ReadDeadline:
    """One timer per connection, for the part of the request being read. Timeouts
    of 0 turn a deadline off. A request the parser cannot read is answered in the
    error envelope (uvicorn's own answer is a plain-text 400)."""

    send_400_response = error_handlers.send_unreadable_request_answer

    header_read_timeout: float = 10.0
    body_read_timeout: float = 30.0
    _deadline: asyncio.TimerHandle | None = None
    _reading: str | None = None  # HEADERS, BODY or None (no request being read)

    def _read(self, part: str | None) -> None:
        if part == self._reading and (part is None or self._deadline is not None):
            return
        self._stop_deadline()
        self._reading = part
        seconds = {HEADERS: self.header_read_timeout, BODY: self.body_read_timeout}.get(part, 0)
        if seconds > 0:
            self._deadline = self.loop.call_later(seconds, self._read_timed_out, part)

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _read_timed_out(self, part: str) -> None:
        self._deadline = None
        if self.transport is not None and not self.transport.is_closing():
            client = "%s:%d" % self.client if self.client else "client"
            logger.info("closing the connection of %s: request %s not received in time", client, part)
            self.transport.close()

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        # A connection that never sends a byte is closed too: uvicorn's keep-alive
        # timer only starts after a first response.
        self._read(HEADERS)

    def connection_lost(self, exc) -> None:
        self._stop_deadline()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, *args) -> None:
        # The connection is another protocol's from here on.
        self._read(None)
        super().handle_websocket_upgrade(*args)


class _H11ReadDeadline(_ReadDeadline):
    def data_received(self, data: bytes) -> None:
        if self._reading is None and self.conn.their_state is h11.IDLE:
            self._read(HEADERS)  # the first bytes of a request on a kept-alive connection
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request already (partly) buffered is read from here on.
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._read(HEADERS)
        else:
            self._follow()

    def _follow(self) -> None:
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self._read(BODY)
        elif state is not h11.IDLE:  # the request is in (DONE, MUST_CLOSE) or broken
            self._read(None)


class H11DeadlineProtocol(_H11ReadDeadline, H11Protocol):
    pass


if HttpToolsProtocol is not None:

    class _HttpToolsReadDeadline(_ReadDeadline):
        def data_received(self, data: bytes) -> None:
            if self._reading is None:
                self._read(HEADERS)  # the first bytes of a request on a kept-alive connection
            super().data_received(data)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._read(HEADERS)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._read(BODY)

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._read(None)

    class HttpToolsDeadlineProtocol(_HttpToolsReadDeadline, HttpToolsProtocol):
        pass

    DEFAULT_PROTOCOL = HttpToolsDeadlineProtocol
else:  # pragma: no cover
    DEFAULT_PROTOCOL = H11DeadlineProtocol


@functools.cache
def _protocol(base: type, header_read_timeout: float, body_read_timeout: float) -> type:
    return type(base.__name__, (base,), {
        "header_read_timeout": header_read_timeout, "body_read_timeout": body_read_timeout,
    })


def http_protocol(settings: Settings, base: type = DEFAULT_PROTOCOL) -> type[asyncio.Protocol]:
    """uvicorn's `http=` protocol class with the settings' read deadlines (the fast
    parser when it is installed, as uvicorn's own "auto")."""
    return _protocol(base, settings.header_read_timeout_seconds, settings.body_read_timeout_seconds)


def server_options(settings: Settings) -> dict:
    """What every uvicorn we run is given, `socialpub serve` and the gunicorn worker
    alike: our protocol (read deadlines), and no forwarded headers. uvicorn by default
    believes X-Forwarded-For and -Proto from 127.0.0.1 (gunicorn's forwarded_allow_ips
    too); only SOCIALPUB_TRUSTED_PROXY_HOPS decides which count (socialpub.request)."""
    return {"http": http_protocol(settings), "proxy_headers": False}


class Worker(UvicornWorker):
    """gunicorn's worker class: `gunicorn -k socialpub.server.Worker ...`. The
    deadlines come from the environment each worker starts with."""

    def __init__(self, *args, **kwargs) -> None:
        # UvicornWorker reads CONFIG_KWARGS while it builds its config, in __init__.
        self.CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, **server_options(Settings.from_env())}
        super().__init__(*args, **kwargs)
