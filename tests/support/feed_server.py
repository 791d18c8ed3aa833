"""A feed server on 127.0.0.1 for the tests (and the benchmark) that fetch feeds:
each path answers as the test sets it, with ETag/Last-Modified validation (304),
redirects, bodies streamed in chunks or dripped a byte at a time, and a record of
every request's headers."""
from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Document:
    body: bytes = b""
    content_type: str = "application/rss+xml; charset=utf-8"
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    location: str | None = None
    # Seconds between the body's bytes, each sent on its own.
    drip: float = 0.0
    # A body of this many bytes, generated as it is sent (for size caps).
    generated_size: int = 0


@dataclass
class Request:
    path: str
    headers: dict


@dataclass
class FeedServer:
    documents: dict[str, Document] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""
    record_requests: bool = True

    def serve(self, path: str, body: bytes | str = b"", **options) -> str:
        """Serves `body` at `path` from now on; returns its URL."""
        if isinstance(body, str):
            body = body.encode()
        with self.lock:
            self.documents[path] = Document(body=body, **options)
        return self.url(path)

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def requests_to(self, path: str) -> list[Request]:
        with self.lock:
            return [request for request in self.requests if request.path == path]

    def handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with server.lock:
                    if server.record_requests:
                        server.requests.append(Request(self.path, dict(self.headers)))
                    document = server.documents.get(self.path)
                try:
                    self._answer(document)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading, as it should past a limit

            def _answer(self, document: Document | None):
                if document is None:
                    self._send(404, b"not found", "text/plain")
                    return
                if document.location:
                    self.send_response(document.status if 300 <= document.status < 400 else 302)
                    self.send_header("Location", document.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if document.etag and self.headers.get("If-None-Match") == document.etag:
                    self._not_modified(document)
                    return
                if (not document.etag and document.last_modified
                        and self.headers.get("If-Modified-Since") == document.last_modified):
                    self._not_modified(document)
                    return
                self.send_response(document.status)
                self.send_header("Content-Type", document.content_type)
                if document.etag:
                    self.send_header("ETag", document.etag)
                if document.last_modified:
                    self.send_header("Last-Modified", document.last_modified)
                size = document.generated_size or len(document.body)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                if document.generated_size:
                    chunk = b"<!-- padding -->" * 4096
                    sent = 0
                    while sent < size:
                        piece = chunk[: size - sent]
                        self.wfile.write(piece)
                        sent += len(piece)
                elif document.drip:
                    for byte in document.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(document.drip)
                else:
                    self.wfile.write(document.body)

            def _not_modified(self, document: Document):
                self.send_response(304)
                if document.etag:
                    self.send_header("ETag", document.etag)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send(self, status: int, body: bytes, content_type: str):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def __enter__(self) -> "FeedServer":
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        self._server.request_queue_size = 1024
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def rss2(title: str, items: list[dict]) -> str:
    """An RSS 2.0 document; each item may have title, link, guid, description, pubDate, author."""
    entries = "".join(
        "<item>" + "".join(f"<{name}>{_escape(value)}</{name}>" for name, value in item.items()) + "</item>"
        for item in items
    )
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>{_escape(title)}</title>'
            f"<link>https://example.com/</link><description>Tests</description>{entries}</channel></rss>")


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
