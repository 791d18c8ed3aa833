"""Every delivery is signed `t=<unix>,v1=<HMAC-SHA256(secret, "<t>.<body>")>`; a
receiver that checks it in constant time accepts real deliveries and rejects a
tampered body, another secret or a stale timestamp."""
import hashlib
import hmac
import json
import re
import time
import uuid

from socialpub.webhooks import deliveries as webhook_deliveries, endpoints as webhook_endpoints, signing
from tests.support.factories import OPERATOR

SECRET = "whsec_test-secret"


class TestSignAndVerify:
    def test_sign_is_hmac_sha256_of_timestamp_dot_body(self):
        body = b'{"id":"1","type":"test.ping","created_at":"2026-01-01T00:00:00.000Z","data":{}}'
        expected = hmac.new(SECRET.encode(), b"1700000000." + body, hashlib.sha256).hexdigest()
        assert signing.sign(SECRET, 1700000000, body) == expected

    def test_a_fresh_signature_verifies(self):
        body, now = b'{"a":1}', int(time.time())
        header = signing.signature_header(SECRET, now, body)
        assert re.fullmatch(r"t=\d+,v1=[0-9a-f]{64}", header)
        assert signing.verify_signature(SECRET, header, body)

    def test_a_tampered_body_fails(self):
        now = int(time.time())
        header = signing.signature_header(SECRET, now, b'{"amount":1}')
        assert not signing.verify_signature(SECRET, header, b'{"amount":2}')

    def test_another_secret_fails(self):
        now = int(time.time())
        header = signing.signature_header(SECRET, now, b"{}")
        assert not signing.verify_signature("whsec_other", header, b"{}")

    def test_a_stale_or_future_timestamp_fails_even_with_a_valid_mac(self):
        now = 1_800_000_000
        body = b"{}"
        stale = signing.signature_header(SECRET, now - 301, body)
        future = signing.signature_header(SECRET, now + 301, body)
        recent = signing.signature_header(SECRET, now - 299, body)
        assert not signing.verify_signature(SECRET, stale, body, now=now)
        assert not signing.verify_signature(SECRET, future, body, now=now)
        assert signing.verify_signature(SECRET, recent, body, now=now)
        assert signing.verify_signature(SECRET, stale, body, now=now, tolerance_seconds=600)

    def test_a_changed_timestamp_fails(self):
        now = int(time.time())
        body = b"{}"
        mac = signing.sign(SECRET, now, body)
        assert not signing.verify_signature(SECRET, f"t={now - 1},v1={mac}", body)

    def test_malformed_headers_fail(self):
        now = int(time.time())
        mac = signing.sign(SECRET, now, b"{}")
        for header in (None, "", f"v1={mac}", f"t={now}", f"t=soon,v1={mac}", mac, f"t={now},v0={mac}"):
            assert not signing.verify_signature(SECRET, header, b"{}"), header

    def test_any_of_several_v1_values_may_match(self):
        now = int(time.time())
        mac = signing.sign(SECRET, now, b"{}")
        assert signing.verify_signature(SECRET, f"t={now},v1={'0' * 64},v1={mac}", b"{}")

    def test_comparison_is_constant_time(self, monkeypatch):
        compared = []
        real = hmac.compare_digest

        def spy(a, b):
            compared.append((a, b))
            return real(a, b)

        monkeypatch.setattr(signing.hmac, "compare_digest", spy)
        now = int(time.time())
        assert signing.verify_signature(SECRET, signing.signature_header(SECRET, now, b"{}"), b"{}")
        assert compared, "signatures must be compared with hmac.compare_digest"


class TestDeliveredRequests:
    def test_the_receiver_verifies_every_delivery_and_sees_the_spec_envelope(self, db, session, add_endpoint, receiver, wh_settings):
        endpoint, secret = add_endpoint()
        delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
        result = webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        assert result.status == "succeeded" and result.response_status == 200

        [request] = receiver.received
        assert request.verified
        assert request.headers["X-Service-Event"] == "test.ping"
        assert request.headers["X-Service-Delivery"] == str(delivery.id)
        assert request.headers["Content-Type"] == "application/json"
        body = json.loads(request.body)
        assert set(body) == {"id", "type", "created_at", "data"}
        assert body["type"] == "test.ping" and body["data"] == {}
        uuid.UUID(body["id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["created_at"])
        # What the receiver verified is the raw body it got: altering it breaks the check.
        header = request.headers["X-Service-Signature"]
        assert signing.verify_signature(secret, header, request.body)
        assert not signing.verify_signature(secret, header, request.body.replace(b"test.ping", b"post.failed"))

    def test_each_attempt_is_signed_afresh_over_the_same_body(self, db, session, add_endpoint, receiver, wh_settings):
        from tests.support.webhook_receiver import Answer

        endpoint, _ = add_endpoint()
        receiver.script(Answer(500), Answer(200))
        delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        webhook_endpoints.resend_delivery(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, delivery_id=delivery.id)
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        first, second = receiver.received
        assert first.verified and second.verified
        assert first.body == second.body
        assert first.headers["X-Service-Delivery"] == second.headers["X-Service-Delivery"] == str(delivery.id)

    def test_the_secret_is_encrypted_at_rest_and_shown_once(self, session, add_endpoint):
        from sqlalchemy import text

        endpoint, secret = add_endpoint()
        assert secret.startswith("whsec_") and len(secret) >= 40
        stored = session.execute(
            text("SELECT secret_encrypted, secret_prefix FROM webhook_endpoints WHERE id = :id"), {"id": endpoint.id.hex if session.bind.dialect.name == "sqlite" else endpoint.id}
        ).one()
        assert secret not in stored.secret_encrypted
        assert secret.startswith(stored.secret_prefix) and len(stored.secret_prefix) < len(secret) // 2
        assert signing.endpoint_secret(endpoint) == secret
        _, another = add_endpoint()
        assert another != secret
