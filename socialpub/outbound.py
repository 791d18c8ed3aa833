"""The one guarded HTTP client for every outbound request (cross-cutting).

Platform instance URLs, feed URLs and webhook URLs are user input, so a request may
only reach public http(s) addresses: private, loopback, link-local (cloud metadata),
multicast and reserved ranges (and IPv6 addresses that tunnel to them: 6to4, Teredo,
NAT64) are refused after DNS resolution and again on every redirect. The connection
is pinned to the address that was checked, so a second DNS answer cannot swap it. A
redirect to another origin does not carry the caller's credential headers along.
Per-phase timeouts, a deadline for the whole request and a response size cap bound
every call. Operators allow named hosts, addresses or CIDR ranges with
SOCIALPUB_OUTBOUND_ALLOW_HOSTS (tests use it for their local servers).
"""
from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import socket
import time
from dataclasses import dataclass, field
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
                        chunks, size = [], 0
                        for chunk in response.iter_bytes():
                            size += len(chunk)
                            if size > self.max_bytes:
                                raise ResponseTooLarge(f"response larger than {self.max_bytes} bytes", response.status_code)
                            chunks.append(chunk)
                        return Response(response.status_code, response.headers, b"".join(chunks), str(parsed))
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
