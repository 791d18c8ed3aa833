"""Compression bombs and a local server that answers with them.

A bomb is built in a streaming way, a mebibyte of zeros at a time, without ever
holding (or compressing) the gibibyte it inflates to: after a full flush a deflate or
Brotli compressor starts afresh, so every further mebibyte of zeros compresses to the
same bytes, written once and repeated. The trailers are computed, not compressed:
the CRC-32 a mebibyte at a time, Adler-32 of zeros by its formula.
"""
import gzip
import http.server
import threading
import zlib
from collections.abc import Iterator

import pytest

MiB = 1 << 20
GiB = 1 << 30
_ZEROS = bytes(MiB)


def raw_deflate_zeros(size: int) -> Iterator[bytes]:
    """Raw deflate (RFC 1951) of `size` zero bytes (a whole number of MiB)."""
    assert size % MiB == 0 and size >= 2 * MiB
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = compressor.compress(_ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH)
    piece = compressor.compress(_ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(_ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH) == piece
    yield first
    for _ in range(size // MiB - 1):
        yield piece
    yield compressor.flush()


def gzip_zeros(size: int) -> Iterator[bytes]:
    """A gzip member (RFC 1952) of `size` zero bytes."""
    yield b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # magic, deflate, no flags, no mtime, max compression, OS unknown
    yield from raw_deflate_zeros(size)
    crc = 0
    for _ in range(size // MiB):
        crc = zlib.crc32(_ZEROS, crc)
    yield crc.to_bytes(4, "little") + (size % (1 << 32)).to_bytes(4, "little")


def zlib_zeros(size: int) -> Iterator[bytes]:
    """The zlib format (RFC 1950, HTTP's `deflate`) of `size` zero bytes."""
    yield b"\x78\xda"  # deflate, 32 KiB window, best compression
    yield from raw_deflate_zeros(size)
    yield (((size % 65521) << 16) | 1).to_bytes(4, "big")  # Adler-32 of zeros: a stays 1, b counts them


def brotli_zeros(size: int) -> Iterator[bytes]:
    import brotli

    compressor = brotli.Compressor(quality=5)
    first = compressor.process(_ZEROS) + compressor.flush()
    piece = compressor.process(_ZEROS) + compressor.flush()
    assert compressor.process(_ZEROS) + compressor.flush() == piece
    yield first
    for _ in range(size // MiB - 1):
        yield piece
    yield compressor.finish()


class Bombs:
    """Each bomb once per session, built when first asked for."""

    def __init__(self):
        self._built: dict[str, bytes] = {}

    def _once(self, name, build) -> bytes:
        if name not in self._built:
            self._built[name] = build()
        return self._built[name]

    @property
    def gzip(self) -> bytes:
        return self._once("gzip", lambda: b"".join(gzip_zeros(GiB)))

    @property
    def gzip_gzip(self) -> bytes:
        return self._once("gzip_gzip", lambda: gzip.compress(self.gzip, 9, mtime=0))

    @property
    def deflate(self) -> bytes:
        return self._once("deflate", lambda: b"".join(zlib_zeros(GiB)))

    @property
    def raw_deflate(self) -> bytes:
        return self._once("raw_deflate", lambda: b"".join(raw_deflate_zeros(GiB)))

    @property
    def br(self) -> bytes:
        return self._once("br", lambda: b"".join(brotli_zeros(GiB)))


@pytest.fixture(scope="session")
def bombs() -> Bombs:
    return Bombs()


class _EncodedHandler(http.server.BaseHTTPRequestHandler):
    """Answers each path with the body and Content-Encoding registered for it;
    /accept-encoding echoes the request's Accept-Encoding."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/accept-encoding":
            encodings, body = [], (self.headers.get("Accept-Encoding") or "").encode()
        else:
            encodings, body = self.server.routes[self.path]
        try:
            self.send_response(200)
            for encoding in encodings:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client refused the body, as it should


class EncodedServer:
    def __init__(self):
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EncodedHandler)
        self._server.daemon_threads = True
        self._server.routes = {}
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._count = 0

    def serve(self, body: bytes, *encodings: str) -> str:
        """The URL that answers `body` with one Content-Encoding header per item of
        `encodings` (an item may itself list several: "gzip, gzip")."""
        self._count += 1
        path = f"/r{self._count}"
        self._server.routes[path] = (encodings, body)
        return self.url + path

    def start(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def encoded_server():
    server = EncodedServer()
    server.start()
    yield server
    server.stop()
