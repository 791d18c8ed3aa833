"""The one guarded HTTP client for every outbound request (cross-cutting).

Platform instance URLs, feed URLs and webhook URLs are user input, so a request may
only reach public http(s) addresses: private, loopback, link-local (cloud metadata),
multicast and reserved ranges (and IPv6 addresses that tunnel to them: 6to4, Teredo,
NAT64) are refused after DNS resolution and again on every redirect. The connection
is pinned to the address that was checked, so a second DNS answer cannot swap it. A
redirect to another origin does not carry the caller's credential headers along.
Per-phase timeouts, a deadline for the whole request and a response size cap bound
every call. The cap counts the bytes a response decodes to, as they are decoded: a
compressed body is inflated a bounded step at a time (never all at once, as httpx
would), so a small body that inflates to gigabytes is refused at the cap with no more
than the cap and a step in memory. One content coding at most (gzip, deflate, br with
Brotli >= 1.2, zstd with zstandard; identity); a stacked (`gzip, gzip`) or unknown
coding is refused before anything is decoded. Operators allow named hosts, addresses or
CIDR ranges with SOCIALPUB_OUTBOUND_ALLOW_HOSTS (tests use it for their local servers).
"""
from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import socket
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from urllib.parse import urljoin

import httpcore
import httpx

MAX_REDIRECTS = 5
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
# Per-phase timeouts restart with every byte received, so a destination that drips its
# answer would hold the calling thread for as long as it likes: a whole request,
# redirects included, must also finish within this many seconds.
DEFAULT_TOTAL_TIMEOUT = 30.0
USER_AGENT = "socialpub/1.0 (+https://socialpub.dev)"
@functools.cache
def _tls():
    """One TLS context for every request: building one costs tens of milliseconds."""
    return httpx.create_ssl_context()


class OutboundRefused(Exception):
    """The destination is not allowed (scheme, address) or the response broke a limit."""


class OutboundFailed(Exception):
    """The request could not be completed: DNS, connection, timeout."""


class OutboundTimedOut(OutboundFailed):
    """The destination did not answer in time. Callers that report outcomes (webhook
    deliveries) tell a slow receiver from an unreachable one."""


class ResponseTooLarge(OutboundRefused):
    """The response broke the size cap. Its status is known by then, which a caller
    that only needs the status (webhook deliveries) may still use."""

    def __init__(self, message: str, status_code: int):
        super().__init__(message)
        self.status_code = status_code


class UndecodableResponse(OutboundFailed):
    """The response's body could not be decoded: more than one content coding, a coding
    this client does not decode, or a corrupt compressed stream. Nothing of it was kept;
    its status is known, for callers that only need the status."""

    def __init__(self, message: str, status_code: int):
        super().__init__(message)
        self.status_code = status_code


@dataclass
class Allowlist:
    hosts: frozenset[str] = frozenset()
    networks: tuple = ()

    @classmethod
    def parse(cls, raw: str | None) -> "Allowlist":
        hosts, networks = set(), []
        for item in (raw or "").split(","):
            item = item.strip().lower()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    @classmethod
    def from_env(cls) -> "Allowlist":
        return cls.parse(os.environ.get("SOCIALPUB_OUTBOUND_ALLOW_HOSTS"))

    def allows_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, address) -> bool:
        return any(address in network for network in self.networks)


# NAT64's well-known prefix (RFC 6052): a gateway forwards to the IPv4 address in
# the last 32 bits.
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and that a relay or gateway would
    deliver to: 6to4 (2002::/16), Teredo (2001::/32, its server and its client) and
    NAT64. A public-looking IPv6 address can reach 169.254.169.254 this way."""
    found = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in NAT64_PREFIX:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


MAX_HOST_LENGTH = 253
HOST_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,63}$")


def host_problem(url: httpx.URL) -> str | None:
    """Why the URL's host cannot be looked up, or None. DNS caps a label at 63 octets
    and a name at 253, and has no empty labels; the resolver raises an encoding error
    (not a lookup failure) for names that break this, so they are told apart here."""
    raw = url.raw_host.decode("ascii", errors="replace")
    if not raw:
        return "the URL has no host"
    try:
        ipaddress.ip_address(raw)
        return None
    except ValueError:
        pass
    name = raw[:-1] if raw.endswith(".") else raw
    if len(name) > MAX_HOST_LENGTH:
        return f"the host name is longer than {MAX_HOST_LENGTH} characters"
    for label in name.split("."):
        if not label:
            return "the host name has an empty label (two dots in a row, or a leading dot)"
        if len(label) > 63:
            return "a label of the host name is longer than 63 characters"
        if not HOST_LABEL.match(label):
            return "the host name may only contain letters, digits, hyphens and dots"
    return None


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            address = address.ipv4_mapped
        elif not all(is_public(inner) for inner in embedded_ipv4(address)):
            return False
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address in ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT
    )


# Headers that prove who the caller is to the origin it addressed; another origin a
# redirect points to never receives them (as httpx and requests do).
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def _origin(url: httpx.URL) -> tuple:
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


def _keeps_credentials(sent_to: httpx.URL, location: str) -> bool:
    """Same origin, or the same host moving from http to https on the default ports."""
    try:
        redirected_to = httpx.URL(location)
    except Exception:  # noqa: BLE001 - unparsable: check() refuses it before any request
        return False
    if _origin(sent_to) == _origin(redirected_to):
        return True
    return (
        sent_to.scheme == "http" and redirected_to.scheme == "https" and sent_to.host == redirected_to.host
        and _origin(sent_to)[2] == 80 and _origin(redirected_to)[2] == 443
    )


@dataclass
class Response:
    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str

    def json(self):
        return json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class _Deadline:
    """The instant a request must be over by. Every socket operation waits at most
    until then, whatever its own timeout."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def bound(self, timeout: float | None, error: type[Exception]) -> float:
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise error(f"no complete answer within {self.seconds:g} seconds")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: _Deadline):
        self._stream, self._deadline = stream, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None, timeout: float | None = None):
        # The handshake is one call with one deadline (CPython's ssl module bounds it whole).
        timeout = self._deadline.bound(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, timeout), self._deadline)

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.SyncBackend):
    def __init__(self, deadline: _Deadline):
        self._deadline = deadline

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        timeout = self._deadline.bound(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(super().connect_tcp(host, port, timeout, local_address, socket_options), self._deadline)


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport on a connection pool whose sockets honour the deadline."""

    def __init__(self, deadline: _Deadline):
        super().__init__(verify=_tls(), trust_env=False)
        # httpx has no parameter for httpcore's network backend; its pool is where one goes.
        self._pool = httpcore.ConnectionPool(ssl_context=_tls(), network_backend=_DeadlineBackend(deadline))


# --- Decoding a response's body -------------------------------------------------------
# httpx decodes a whole received chunk at once: 1,827 bytes of `gzip, gzip` become a
# gibibyte before anything can count them. Here the raw body is decoded by hand, each
# step producing at most DECODE_STEP bytes, and the cap is checked after every step.
DECODE_STEP = 64 * 1024
# zstd frames may ask for any window; RFC 8878 has HTTP decoders support 8 MiB.
ZSTD_MAX_WINDOW = 8 * 1024 * 1024


def _bounded_brotli():
    """Brotli's module, if one is installed that can bound a step's output (Brotli or
    brotlicffi >= 1.2: `output_buffer_limit`); older ones inflate a chunk whole."""
    for name in ("brotli", "brotlicffi"):
        try:
            module = __import__(name)
            decompressor = module.Decompressor()
            process = getattr(decompressor, "process", None) or decompressor.decompress
            process(b"", output_buffer_limit=DECODE_STEP)
            decompressor.can_accept_more_data()
            return module
        except (ImportError, AttributeError, TypeError):
            continue
    return None


def _zstandard():
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


_brotli = _bounded_brotli()
_zstd = _zstandard()


def _inflate(raw: Iterator[bytes], wbits: int, *, members: bool = False) -> Iterator[bytes]:
    """zlib's formats (gzip, zlib, raw deflate), DECODE_STEP bytes at most per step.
    `members`: a gzip body may be several gzip members one after the other (as gzip
    itself reads them); bytes after the last complete member that are not another one
    are ignored, as are bytes after the end of a deflate stream."""
    decompressor = zlib.decompressobj(wbits)
    later_member = ignore_rest = False
    for data in raw:
        pending = False  # the last step filled its output: more may be waiting in zlib
        while (data or pending) and not ignore_rest:
            if decompressor.eof:
                if not members:
                    ignore_rest = True
                    break
                decompressor, later_member = zlib.decompressobj(wbits), True
            try:
                out = decompressor.decompress(data, DECODE_STEP)
            except zlib.error:
                if later_member:  # trailing garbage after a complete member
                    ignore_rest = True
                    break
                raise
            pending = len(out) == DECODE_STEP and not decompressor.eof
            data = decompressor.unused_data if decompressor.eof else decompressor.unconsumed_tail
            if out:
                yield out


def _gunzip(raw: Iterator[bytes]) -> Iterator[bytes]:
    return _inflate(raw, 16 + zlib.MAX_WBITS, members=True)


def _is_zlib_header(head: bytes) -> bool:
    return len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and (head[0] << 8 | head[1]) % 31 == 0


def _undeflate(raw: Iterator[bytes]) -> Iterator[bytes]:
    """`deflate` is the zlib format (RFC 9110), but servers also send raw deflate: the
    first two bytes tell which (a compressor never starts raw deflate with a zlib header)."""
    head = b""
    for data in raw:
        head += data
        if len(head) >= 2:
            break
    wbits = zlib.MAX_WBITS if _is_zlib_header(head) else -zlib.MAX_WBITS
    return _inflate(chain([head], raw), wbits)


def _unbrotli(raw: Iterator[bytes]) -> Iterator[bytes]:
    decompressor = _brotli.Decompressor()
    process = getattr(decompressor, "process", None) or decompressor.decompress
    for data in raw:
        if not data:
            continue
        out = process(data, output_buffer_limit=DECODE_STEP)
        # A step that filled its output may have more waiting, even when the decoder
        # says it could take more input (Brotli 1.2's can_accept_more_data only
        # looks at the input it holds back).
        while len(out) >= DECODE_STEP or not decompressor.can_accept_more_data():
            if out:
                yield out
            out = process(b"", output_buffer_limit=DECODE_STEP)
            if not out and not decompressor.can_accept_more_data():
                raise _brotli.error("the decoder made no progress")
        if out:
            yield out


class _RawReader:
    """A file to read the raw body from, for zstandard's reader."""

    def __init__(self, raw: Iterator[bytes]):
        self._raw, self._buffer = raw, b""

    def read(self, size: int = -1) -> bytes:
        if not self._buffer:
            self._buffer = next(self._raw, b"")
        if size < 0:
            size = len(self._buffer)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


def _unzstd(raw: Iterator[bytes]) -> Iterator[bytes]:
    decompressor = _zstd.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    reader = decompressor.stream_reader(_RawReader(raw), read_size=16 * 1024, read_across_frames=True, closefd=False)
    while out := reader.read(DECODE_STEP):
        yield out


def _identity(raw: Iterator[bytes]) -> Iterator[bytes]:
    return raw


DECODERS = {"identity": _identity, "gzip": _gunzip, "x-gzip": _gunzip, "deflate": _undeflate}
DECODE_ERRORS: tuple[type[Exception], ...] = (zlib.error,)
if _brotli is not None:
    DECODERS["br"] = _unbrotli
    DECODE_ERRORS += (_brotli.error,)
if _zstd is not None:
    DECODERS["zstd"] = _unzstd
    DECODE_ERRORS += (_zstd.ZstdError,)
# What requests offer (a caller's own Accept-Encoding is sent as given, and its answer
# decoded by these same rules).
ACCEPT_ENCODING = ", ".join(name for name in ("gzip", "deflate", "br", "zstd") if name in DECODERS)


def content_coding(headers: httpx.Headers, status_code: int) -> str:
    """The one content coding a response's body is in ("identity" for none), or
    UndecodableResponse: a body encoded twice or more (`gzip, gzip`: each layer
    multiplies what a small body inflates to) or in a coding not decoded here."""
    codings = [
        coding.strip().lower()
        for coding in headers.get_list("content-encoding", split_commas=True)
        if coding.strip() and coding.strip().lower() != "identity"
    ]
    shown = ", ".join(headers.get_list("content-encoding"))
    if len(codings) > 1:
        raise UndecodableResponse(
            f"the response is encoded more than once (Content-Encoding: {shown}); one content coding at most is accepted",
            status_code,
        )
    if not codings:
        return "identity"
    if codings[0] not in DECODERS:
        supported = ", ".join(sorted(DECODERS))
        raise UndecodableResponse(
            f"the response's content coding {codings[0]!r} is not supported (supported: {supported})", status_code,
        )
    return codings[0]


def raw_allowance(max_bytes: int) -> int:
    """The most raw (still encoded) bytes read for a body capped at `max_bytes` decoded:
    a compressed body is barely larger than its content when it does not compress, and
    one that keeps arriving without decoding to anything must end too."""
    return max_bytes + max_bytes // 100 + 16 * 1024


def read_body(response: httpx.Response, max_bytes: int) -> bytes:
    """The response's decoded body, its decoded size counted step by step:
    ResponseTooLarge past `max_bytes` (or past raw_allowance raw bytes),
    UndecodableResponse for a coding refused or a corrupt stream."""
    status = response.status_code
    coding = content_coding(response.headers, status)
    allowance = raw_allowance(max_bytes)

    def raw() -> Iterator[bytes]:
        received = 0
        for chunk in response.iter_raw():
            received += len(chunk)
            if received > allowance and coding != "identity":  # identity: the decoded count is this one
                raise ResponseTooLarge(
                    f"response larger than {max_bytes} bytes: over {allowance} bytes of {coding} received", status,
                )
            yield chunk

    chunks, size = [], 0
    try:
        for piece in DECODERS[coding](raw()):
            size += len(piece)
            if size > max_bytes:
                decoded = "" if coding == "identity" else f" decoded from {coding}"
                raise ResponseTooLarge(f"response larger than {max_bytes} bytes{decoded}", status)
            chunks.append(piece)
    except DECODE_ERRORS as exc:
        raise UndecodableResponse(f"the response's {coding} content could not be decoded: {exc}", status) from None
    return b"".join(chunks)


@dataclass
class GuardedClient:
    allowlist: Allowlist = field(default_factory=Allowlist.from_env)
    timeout: httpx.Timeout = field(default_factory=lambda: DEFAULT_TIMEOUT)
    max_bytes: int = DEFAULT_MAX_BYTES
    resolver: object = None  # (host, port) -> list of addresses; tests substitute it
    # Seconds for the whole request, every redirect, connection and byte included.
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT

    def _resolve(self, host: str, port: int) -> list[str]:
        if self.resolver is not None:
            return list(self.resolver(host, port))
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise OutboundFailed(f"cannot resolve {host}: {exc}") from None
        except (UnicodeError, ValueError) as exc:
            # The name cannot be encoded for a lookup at all: asking again will not help.
            raise OutboundRefused(f"{host!r} is not a usable host name: {exc}") from None
        return [info[4][0] for info in infos]

    def check(self, url: str) -> tuple[httpx.URL, str]:
        """The parsed URL and the address to connect to, or OutboundRefused."""
        try:
            parsed = httpx.URL(url)
        except Exception:  # noqa: BLE001 - any unparsable URL
            raise OutboundRefused(f"not a valid URL: {url!r}") from None
        if parsed.scheme not in ("http", "https"):
            raise OutboundRefused(f"only http and https URLs are allowed, not {parsed.scheme or 'none'!r}")
        host = parsed.host
        if not host:
            raise OutboundRefused("the URL has no host")
        problem = host_problem(parsed)
        if problem:
            raise OutboundRefused(f"{host!r} is not a usable host name: {problem}")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        addresses = [host] if literal else self._resolve(host, port)
        if not addresses:
            raise OutboundFailed(f"{host} has no address")
        host_allowed = self.allowlist.allows_host(host)
        for text in addresses:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            if not (host_allowed or self.allowlist.allows_address(address) or is_public(address)):
                raise OutboundRefused(f"{host} resolves to {address}, a non-public address")
        return parsed, addresses[0]

    def request(self, method: str, url: str, *, headers: dict | None = None, json=None, data=None, content=None) -> Response:
        current, body_method = url, method
        headers = dict(headers or {})
        deadline = _Deadline(self.total_timeout)
        for _ in range(MAX_REDIRECTS + 1):
            parsed, address = self.check(current)
            if deadline.expired():  # a slow DNS answer, or the redirects so far
                raise OutboundTimedOut(f"no complete answer within {deadline.seconds:g} seconds")
            pinned = parsed.copy_with(host=address)
            request_headers = {"User-Agent": USER_AGENT, **headers, "Host": parsed.netloc.decode("ascii")}
            if not any(name.lower() == "accept-encoding" for name in headers):
                request_headers["Accept-Encoding"] = ACCEPT_ENCODING
            extensions = {"sni_hostname": parsed.host} if parsed.scheme == "https" else {}
            try:
                with httpx.Client(timeout=self.timeout, follow_redirects=False, trust_env=False,
                                  transport=_DeadlineTransport(deadline)) as client:
                    request = client.build_request(
                        body_method, pinned, headers=request_headers, json=json, data=data, content=content,
                        extensions=extensions,
                    )
                    response = client.send(request, stream=True)
                    try:
                        if response.is_redirect and "location" in response.headers:
                            current = urljoin(str(parsed), response.headers["location"])
                            if not _keeps_credentials(parsed, current):
                                headers = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
                            if response.status_code in (301, 302, 303) and body_method != "HEAD":
                                body_method, json, data, content = "GET", None, None, None
                            continue
                        content = read_body(response, self.max_bytes)
                        return Response(response.status_code, response.headers, content, str(parsed))
                    finally:
                        response.close()
            except httpx.TimeoutException as exc:
                if deadline.expired():
                    raise OutboundTimedOut(f"no complete answer within {deadline.seconds:g} seconds") from None
                raise OutboundTimedOut(f"timed out: {exc.__class__.__name__}") from None
            except httpx.HTTPError as exc:
                raise OutboundFailed(f"{exc.__class__.__name__}: {exc}") from None
        raise OutboundRefused(f"more than {MAX_REDIRECTS} redirects")

    def get(self, url: str, **kwargs) -> Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs) -> Response:
        return self.request("POST", url, **kwargs)
