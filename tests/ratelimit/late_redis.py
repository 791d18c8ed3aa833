"""A Redis of the test's own behind a proxy that can make its answers late: the next
answer (or the next few) held for a while, or every answer held until told.
Redis itself runs the calls at once; only their answers reach the client late, as
when the machine is too busy to deliver them on time (or, held for good, as a
frozen Redis)."""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time

from redis import Redis

from tests.support import backends
from tests.support.processes import free_port


class LateRedis:
    def __init__(self, log_path):
        if shutil.which("redis-server") is None:
            backends.unavailable("redis-server is not installed")
        self.redis_port = free_port()
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.direct = self._wait_ready()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self._listener.getsockname()[1]}/0"
        self._changed = threading.Condition()
        self._late: list[float] = []  # how long each of the next answers is held
        self._frozen = False
        self._closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _wait_ready(self) -> Redis:
        direct = Redis(port=self.redis_port, socket_connect_timeout=1, socket_timeout=5)
        deadline = time.monotonic() + 10
        while True:
            try:
                direct.ping()
                return direct
            except Exception:  # not up yet
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.05)

    # What the test asks of the answers.

    def late(self, seconds: float, answers: int = 1) -> None:
        """Holds each of the next `answers` answers `seconds` before passing it on."""
        with self._changed:
            self._late.extend([seconds] * answers)

    def freeze(self) -> None:
        """Holds every answer until thaw(): a Redis that accepts calls and answers none."""
        with self._changed:
            self._frozen = True

    def thaw(self) -> None:
        with self._changed:
            self._frozen = False
            self._changed.notify_all()

    def counted(self) -> int:
        """Requests the limiters recorded in Redis (every window of every caller)."""
        return sum(self.direct.llen(name) for name in self.direct.scan_iter(match="LIMITS:*"))

    # The proxy.

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.redis_port))
            except OSError:
                return
            self._sockets += [client, upstream]
            threading.Thread(target=self._calls, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._answers, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _calls(client: socket.socket, upstream: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            upstream.close()

    def _answers(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while data := upstream.recv(65536):
                with self._changed:
                    while self._frozen and not self._closed:
                        self._changed.wait()
                    hold = self._late.pop(0) if self._late else 0.0
                if hold:
                    time.sleep(hold)
                client.sendall(data)
        except OSError:
            pass
        finally:
            client.close()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self._listener.close()
        for connection in self._sockets:
            try:
                connection.close()
            except OSError:
                pass
        self.direct.close()
        self.process.kill()
        self.process.wait(timeout=10)
        self.log.close()
