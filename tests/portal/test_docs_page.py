"""GET /docs: the page introducing the API, with links to the reference and the
contract, every operation and scope of the contract, and a signature-verification
example that actually verifies a delivery's signature."""
import hashlib
import hmac
import html
import re
import time

from socialpub import contract
from socialpub.scopes import ALL_SCOPES


def page(client) -> str:
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def published_example(text: str) -> dict:
    code = re.search(r'<code id="signature-example">(.*?)</code>', text, re.S).group(1)
    namespace: dict = {}
    exec(compile(html.unescape(code), "docs-signature-example", "exec"), namespace)
    return namespace


class TestDocsPage:
    def test_introduces_each_topic_and_links_the_reference_and_the_contract(self, client):
        text = page(client)
        for anchor in ("authentication", "modes", "scopes", "errors", "rate-limits", "idempotency", "pagination",
                       "webhooks", "operations"):
            assert f'id="{anchor}"' in text and f'href="#{anchor}"' in text
        assert 'href="/api/v1/ui/"' in text and 'href="/api/v1/openapi.json"' in text
        assert client.get("/api/v1/openapi.json").status_code == 200
        assert client.get("/api/v1/ui/").status_code == 200

    def test_lists_every_operation_of_the_contract_with_its_scope(self, client):
        text = page(client)
        for operation in contract.operations():
            assert f"<code>/api/v1{operation.path}</code>" in text, operation.path
        for scope in ALL_SCOPES:
            assert f"<code>{scope}</code>" in text

    def test_needs_no_key(self, client):
        assert client.get("/docs").status_code == 200

    def test_the_signature_example_accepts_a_valid_signature(self, client):
        verify = published_example(page(client))["verify"]
        secret, body, now = "whsec_test", b'{"id":"1","type":"test.ping","created_at":"2026-11-22T09:30:00Z","data":{}}', int(time.time())
        v1 = hmac.new(secret.encode(), f"{now}.".encode() + body, hashlib.sha256).hexdigest()
        assert verify(secret, f"t={now},v1={v1}", body) is True

    def test_the_signature_example_refuses_tampering_staleness_and_garbage(self, client):
        verify = published_example(page(client))["verify"]
        secret, body, now = "whsec_test", b'{"data":{}}', int(time.time())
        v1 = hmac.new(secret.encode(), f"{now}.".encode() + body, hashlib.sha256).hexdigest()
        assert verify(secret, f"t={now},v1={v1}", body + b" ") is False
        assert verify("another secret", f"t={now},v1={v1}", body) is False
        stale = now - 3600
        old = hmac.new(secret.encode(), f"{stale}.".encode() + body, hashlib.sha256).hexdigest()
        assert verify(secret, f"t={stale},v1={old}", body) is False
        for header in ("", "garbage", f"v1={v1}", f"t=abc,v1={v1}", f"t={now}"):
            assert verify(secret, header, body) is False
