"""Idempotency-Key on POST: replay, conflict, not keeping 422s, expiry, per-key
isolation, and a repeat while the first request is still running."""
import datetime as dt

import pytest
from sqlalchemy import select

from persistence.idempotency import IdempotencyRecord
from persistence.types import utcnow
from socialpub.errors import ApiError
from socialpub.idempotency import service as idempotency
from tests.support.factories import make_key
from tests.support.posts import post_count

URL = "/api/v1/posts"
BODY = {"content": "Once only", "platforms": ["twitter"]}


def create(client, key, body=BODY, idempotency_key="order-42"):
    return client.post(URL, headers={**key.headers, "Idempotency-Key": idempotency_key}, json=body)


class TestIdempotencyKey:
    def test_a_repeat_is_replayed_and_does_nothing_more(self, client, session, key):
        first = create(client, key)
        assert first.status_code == 201 and "idempotent-replayed" not in first.headers
        again = create(client, key)
        assert again.status_code == 201
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()
        assert again.headers["location"] == first.headers["location"]
        assert post_count(session) == 1

    def test_the_same_key_with_another_request_is_409(self, client, session, key):
        create(client, key)
        other = create(client, key, body={"content": "Something else", "platforms": ["twitter"]})
        assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
        elsewhere = client.post(f"{URL}/{create(client, key).json()['data']['id']}/publish",
                                headers={**key.headers, "Idempotency-Key": "order-42"})
        assert elsewhere.status_code == 409 and elsewhere.json()["error"]["code"] == "idempotency_conflict"
        assert post_count(session) == 1

    def test_validation_failures_are_not_kept(self, client, session, key):
        bad = create(client, key, body={"content": "x", "platforms": ["myspace"]})
        assert bad.status_code == 422
        fixed = create(client, key, body={"content": "x", "platforms": ["myspace"]})
        assert fixed.status_code == 422 and "idempotent-replayed" not in fixed.headers
        assert create(client, key).status_code == 201
        assert post_count(session) == 1

    def test_other_refusals_are_kept_and_replayed(self, client, session, workspace, key):
        missing = "0f9d4f7e-2a4e-4a39-9d4a-6f1c0a8b9e11"
        first = client.post(f"{URL}/{missing}/publish", headers={**key.headers, "Idempotency-Key": "pub-1"})
        again = client.post(f"{URL}/{missing}/publish", headers={**key.headers, "Idempotency-Key": "pub-1"})
        assert first.status_code == again.status_code == 404
        assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()

    def test_keys_are_per_api_key(self, client, session, workspace, key):
        other_key = make_key(session, workspace)
        assert create(client, key).status_code == 201
        separate = create(client, other_key)
        assert separate.status_code == 201 and "idempotent-replayed" not in separate.headers
        assert post_count(session) == 2

    def test_a_kept_response_expires_after_a_day(self, client, session, key):
        create(client, key)
        record = session.execute(select(IdempotencyRecord)).scalar_one()
        assert dt.timedelta(hours=23) < record.expires_at - utcnow() <= dt.timedelta(hours=24)
        record.expires_at = utcnow() - dt.timedelta(seconds=1)
        session.commit()
        fresh = create(client, key)
        assert fresh.status_code == 201 and "idempotent-replayed" not in fresh.headers
        assert post_count(session) == 2
        assert idempotency.purge_expired(session=session, now=utcnow() + dt.timedelta(days=2)) == 1

    @pytest.mark.parametrize("value", ["", "has space", "x" * 256])
    def test_a_malformed_key_is_422(self, client, session, key, value):
        response = client.post(URL, headers={**key.headers, "Idempotency-Key": value}, json=BODY)
        assert response.status_code == 422
        assert post_count(session) == 0

    def test_without_a_key_every_request_counts(self, client, session, key):
        client.post(URL, headers=key.headers, json=BODY)
        client.post(URL, headers=key.headers, json=BODY)
        assert post_count(session) == 2


class TestWhileRunning:
    def test_a_repeat_while_the_first_runs_is_409_with_retry_after(self, db, key):
        fingerprint = idempotency.fingerprint("POST", URL, b"", b"{}")
        owner = idempotency.begin(database=db, principal=key.principal, key="k1", request_fingerprint=fingerprint)
        with pytest.raises(ApiError) as refused:
            idempotency.begin(database=db, principal=key.principal, key="k1", request_fingerprint=fingerprint)
        assert refused.value.status == 409 and refused.value.code == "conflict"
        assert refused.value.headers["Retry-After"] == "1"
        idempotency.finish(database=db, record_id=owner, status=201, headers={"content-type": "application/json"}, body=b"{}")
        replay = idempotency.begin(database=db, principal=key.principal, key="k1", request_fingerprint=fingerprint)
        assert replay == idempotency.Replay(201, {"content-type": "application/json"}, b"{}")

    def test_a_request_whose_process_died_is_taken_over(self, db, session, key):
        fingerprint = idempotency.fingerprint("POST", URL, b"", b"{}")
        first = idempotency.begin(database=db, principal=key.principal, key="k2", request_fingerprint=fingerprint)
        session.execute(select(IdempotencyRecord)).scalar_one().locked_until = utcnow() - dt.timedelta(seconds=1)
        session.commit()
        assert idempotency.begin(database=db, principal=key.principal, key="k2", request_fingerprint=fingerprint) == first
