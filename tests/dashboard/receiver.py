"""A webhook receiver on 127.0.0.1 for the dashboard tests: records what it gets and
answers with a status the test sets."""
from __future__ import annotations

import http.server
import threading
from dataclasses import dataclass, field


@dataclass
class LocalReceiver:
    status: int = 200
    received: list[tuple[dict, bytes]] = field(default_factory=list)

    def __enter__(self) -> "LocalReceiver":
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received.append((dict(self.headers), body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
