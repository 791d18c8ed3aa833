"""The guarded client refuses non-public destinations, after resolution and on
redirects, and bounds responses; allowlisted hosts are reachable."""
import http.server
import ipaddress
import threading
import time
from urllib.parse import quote, unquote

import httpx
import pytest

from socialpub.outbound import Allowlist, GuardedClient, OutboundFailed, OutboundRefused, OutboundTimedOut, embedded_ipv4, is_public


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/redirect-private":
            self.send_response(302)
            self.send_header("Location", "http://10.0.0.1/internal")
            self.end_headers()
        elif self.path == "/redirect-local":
            self.send_response(302)
            self.send_header("Location", "/ok")
            self.end_headers()
        elif self.path == "/big":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"x" * 5000)
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"host": "%s"}' % self.headers["Host"].encode())


DRIP_INTERVAL = 0.05


class _DripHandler(http.server.BaseHTTPRequestHandler):
    """Answers slowly but never idly: a byte at a time, each well within any read
    timeout; or redirects to itself a few times, each hop a little late."""

    def log_message(self, *args):
        pass

    def _drip(self, data: bytes):
        for byte in data:
            self.wfile.write(bytes([byte]))
            time.sleep(DRIP_INTERVAL)

    def do_GET(self):
        try:
            if self.path.startswith("/body/"):
                size = int(self.path.rsplit("/", 1)[1])
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
                self._drip(b"x" * size)
            elif self.path == "/headers":
                self._drip(b"HTTP/1.1 200 OK\r\nX-Padding: " + b"p" * 40 + b"\r\nContent-Length: 2\r\n\r\nok")
            elif self.path.startswith("/hops/"):
                left = int(self.path.rsplit("/", 1)[1])
                time.sleep(0.2)
                self.send_response(302 if left else 200)
                self.send_header("Location", f"/hops/{left - 1}")
                self.send_header("Content-Length", "0")
                self.end_headers()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should


@pytest.fixture(scope="module")
def drip_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DripHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def local_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class TestRefusals:
    @pytest.mark.parametrize(
        "url",
        [
            "http://127.0.0.1/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::ffff:127.0.0.1]/",
        ],
    )
    def test_non_public_addresses_are_refused(self, url):
        with pytest.raises(OutboundRefused):
            GuardedClient(allowlist=Allowlist()).get(url)

    @pytest.mark.parametrize(
        "url, embedded",
        [
            ("http://[2002:a9fe:a9fe::]/latest/meta-data/", "169.254.169.254"),  # 6to4
            ("http://[2002:7f00:1::1]/", "127.0.0.1"),
            ("http://[2002:c0a8:0101::]/", "192.168.1.1"),
        ],
    )
    def test_6to4_addresses_embedding_a_non_public_ipv4_are_refused(self, url, embedded):
        with pytest.raises(OutboundRefused, match="non-public"):
            GuardedClient(allowlist=Allowlist()).get(url)
        assert ipaddress.ip_address(embedded) in embedded_ipv4(ipaddress.ip_address(url.split("[")[1].split("]")[0]))

    def test_a_hostname_resolving_to_6to4_metadata_is_refused(self):
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["2002:a9fe:a9fe::1"])
        with pytest.raises(OutboundRefused, match="non-public"):
            client.get("http://innocent.example/")

    @pytest.mark.parametrize(
        "address",
        [
            # Teredo: server 65.54.227.120, client 192.0.2.45 (obfuscated in the last 48 bits).
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            # Teredo whose client is 169.254.169.254: ~169.254.169.254 = 86.1.86.1.
            "2001:0:4136:e378:8000:63bf:5601:5601",
            "64:ff9b::a9fe:a9fe",  # NAT64 to the metadata address
        ],
    )
    def test_teredo_and_nat64_embedding_a_non_public_ipv4_are_not_public(self, address):
        assert not is_public(ipaddress.ip_address(address))

    def test_teredo_client_addresses_are_decoded(self):
        assert ipaddress.ip_address("169.254.169.254") in embedded_ipv4(
            ipaddress.ip_address("2001:0:4136:e378:8000:63bf:5601:5601")
        )

    def test_6to4_embedding_a_public_address_passes(self):
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["2002:808:808::1"])
        assert client.check("https://relay.example/")[1] == "2002:808:808::1"

    @pytest.mark.parametrize(
        "url, says",
        [
            ("http://a..b.com/", "empty label"),
            ("http://.b.com/", "empty label"),
            ("http://" + "a" * 64 + ".com/", "longer than 63"),
            ("http://" + ".".join(["a" * 60] * 5) + "/", "longer than 253"),
            ("http://a%00b.com/", "letters, digits"),
        ],
    )
    def test_unusable_host_names_are_refused(self, url, says):
        with pytest.raises(OutboundRefused, match=f"not a usable host name: .*{says}"):
            GuardedClient(allowlist=Allowlist()).get(url)

    def test_a_name_the_resolver_cannot_encode_is_refused_not_raised(self):
        with pytest.raises(OutboundRefused, match="not a usable host name"):
            GuardedClient(allowlist=Allowlist())._resolve("a..b.com", 80)

    @pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/", "gopher://x/", "not a url"])
    def test_other_schemes_are_refused(self, url):
        with pytest.raises(OutboundRefused):
            GuardedClient(allowlist=Allowlist()).get(url)

    def test_a_hostname_resolving_to_loopback_is_refused(self):
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["127.0.0.1"])
        with pytest.raises(OutboundRefused, match="non-public"):
            client.get("http://innocent.example/")

    def test_a_host_with_any_private_address_is_refused(self):
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["93.184.216.34", "10.1.2.3"])
        with pytest.raises(OutboundRefused):
            client.get("http://mixed.example/")

    def test_a_redirect_to_a_private_address_is_refused(self, local_server):
        client = GuardedClient(allowlist=Allowlist.parse("127.0.0.1"))
        with pytest.raises(OutboundRefused, match="10.0.0.1"):
            client.get(f"{local_server}/redirect-private")

    def test_responses_over_the_cap_are_refused(self, local_server):
        client = GuardedClient(allowlist=Allowlist.parse("127.0.0.1"), max_bytes=1000)
        with pytest.raises(OutboundRefused, match="larger"):
            client.get(f"{local_server}/big")

    def test_unreachable_host_is_a_failure_not_a_refusal(self):
        client = GuardedClient(allowlist=Allowlist.parse("127.0.0.0/8"))
        with pytest.raises(OutboundFailed):
            client.get("http://127.0.0.1:1/")


class TestAllowed:
    def test_allowlisted_address_is_reached_with_its_host_header(self, local_server):
        response = GuardedClient(allowlist=Allowlist.parse("127.0.0.1")).get(f"{local_server}/ok")
        assert response.status_code == 200
        assert response.json()["host"] == local_server.removeprefix("http://")

    def test_allowlisted_cidr_and_host_name(self, local_server):
        port = local_server.rsplit(":", 1)[1]
        assert GuardedClient(allowlist=Allowlist.parse("127.0.0.0/8")).get(f"{local_server}/ok").status_code == 200
        by_name = GuardedClient(allowlist=Allowlist.parse("localhost"))
        assert by_name.get(f"http://localhost:{port}/ok").status_code == 200

    def test_redirects_are_followed_and_checked(self, local_server):
        response = GuardedClient(allowlist=Allowlist.parse("127.0.0.1")).get(f"{local_server}/redirect-local")
        assert response.status_code == 200 and response.url.endswith("/ok")

    def test_public_address_passes_the_check(self):
        client = GuardedClient(allowlist=Allowlist(), resolver=lambda host, port: ["93.184.216.34"])
        parsed, address = client.check("https://example.com/path")
        assert address == "93.184.216.34" and parsed.host == "example.com"

    def test_allowlist_parsing(self):
        allowlist = Allowlist.parse(" 127.0.0.1, fake.test ,10.0.0.0/8,")
        assert allowlist.allows_host("FAKE.test.")
        import ipaddress

        assert allowlist.allows_address(ipaddress.ip_address("10.9.8.7"))
        assert not allowlist.allows_address(ipaddress.ip_address("11.0.0.1"))


class TestTotalDeadline:
    """Every phase answers in time, so only the deadline for the whole request stops these."""

    def client(self, total: float) -> GuardedClient:
        return GuardedClient(allowlist=Allowlist.parse("127.0.0.1"), timeout=httpx.Timeout(1.0), total_timeout=total)

    @pytest.mark.parametrize("path", ["/body/60", "/headers", "/hops/5"])
    def test_a_slow_answer_is_cut_off_at_the_deadline(self, drip_server, path):
        started = time.monotonic()
        with pytest.raises(OutboundTimedOut, match="within 0.5 seconds"):
            self.client(0.5).get(drip_server + path)
        # Well short of what each would take whole (1.2 s and more), with room for a loaded machine.
        assert 0.45 <= time.monotonic() - started < 1.8

    def test_a_slow_answer_within_the_deadline_is_read_whole(self, drip_server):
        response = self.client(5.0).get(drip_server + "/body/6")
        assert response.status_code == 200 and response.content == b"x" * 6
        assert self.client(5.0).get(drip_server + "/hops/2").status_code == 200


class _RecordingHandler(http.server.BaseHTTPRequestHandler):
    """/to?<url> redirects (307) to the URL; anything else records its headers."""

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/to?"):
            self.send_response(307)
            self.send_header("Location", unquote(self.path[4:]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.received.append(({name.lower(): value for name, value in self.headers.items()}, body))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = _answer


@pytest.fixture
def two_origins():
    """Two allowed local servers on different ports: two origins."""
    servers = []
    for _ in range(2):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RecordingHandler)
        server.received = []
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    yield [(f"http://127.0.0.1:{server.server_address[1]}", server.received) for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


CREDENTIALS = {"Authorization": "Bearer s3cret", "cookie": "session=abc", "Proxy-Authorization": "Basic eA=="}


class TestRedirectCredentials:
    def test_a_redirect_to_another_origin_drops_credential_headers(self, two_origins):
        (first, first_received), (second, second_received) = two_origins
        client = GuardedClient(allowlist=Allowlist.parse("127.0.0.1"))
        response = client.post(f"{first}/to?{quote(second + '/in')}", headers={**CREDENTIALS, "X-Trace": "t1"}, content=b"body")
        assert response.status_code == 200 and first_received == []
        headers, body = second_received[0]
        assert not set(headers) & {"authorization", "cookie", "proxy-authorization"}
        assert headers["x-trace"] == "t1" and body == b"body"  # 307 keeps the method and body

    def test_credentials_dropped_once_stay_dropped_when_redirected_back(self, two_origins):
        (first, first_received), (second, _) = two_origins
        back = f"{second}/to?{quote(first + '/in')}"
        GuardedClient(allowlist=Allowlist.parse("127.0.0.1")).get(f"{first}/to?{quote(back)}", headers=CREDENTIALS)
        headers, _ = first_received[0]
        assert "authorization" not in headers and "cookie" not in headers

    def test_a_redirect_within_the_origin_keeps_them(self, two_origins):
        (first, first_received), _ = two_origins
        GuardedClient(allowlist=Allowlist.parse("127.0.0.1")).get(f"{first}/to?%2Fin", headers=CREDENTIALS)
        headers, _ = first_received[0]
        assert headers["authorization"] == "Bearer s3cret" and headers["cookie"] == "session=abc"
