"""A local SMTP server for the crisis tests (aiosmtpd on 127.0.0.1, a port of its own):
it keeps what it accepted, refuses with a reply of the test's choosing, or takes a
user and password; `closed_port` names a port nothing listens on (a server that is down)."""
from __future__ import annotations

import socket
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


closed_port = free_port


class _Handler:
    def __init__(self):
        self.received: list = []
        # An SMTP reply (`550 5.7.1 No thanks`) to every message, instead of accepting it.
        self.refuse_with: str | None = None

    async def handle_DATA(self, server, session, envelope):
        if self.refuse_with:
            return self.refuse_with
        self.received.append(envelope)
        return "250 OK"


class SmtpServer:
    def __init__(self, *, user: str | None = None, password: str | None = None):
        self.handler = _Handler()
        self.port = free_port()
        self.logins: list[str] = []
        options = {}
        if user is not None:
            options = dict(auth_required=True, auth_require_tls=False, authenticator=self._authenticate)
        self._credentials = (user, password)
        self._controller = Controller(self.handler, hostname="127.0.0.1", port=self.port, **options)

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        if isinstance(auth_data, LoginPassword) and (auth_data.login.decode(), auth_data.password.decode()) == self._credentials:
            self.logins.append(auth_data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def refuse(self, reply: str | None) -> None:
        self.handler.refuse_with = reply

    @property
    def messages(self) -> list:
        """What was accepted: (envelope, parsed message)."""
        return [(envelope, message_from_bytes(envelope.original_content, policy=policy.default))
                for envelope in self.handler.received]

    def __enter__(self) -> "SmtpServer":
        self._controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._controller.stop()
