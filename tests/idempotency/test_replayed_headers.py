"""A kept answer is replayed with `Idempotent-Replayed: true`, refusals included, and
the contract declares that header on every response that can be replayed."""
import uuid

import pytest

from socialpub import contract, contract_bundle
from tests.support.factories import make_key, make_post

# Answered before the Idempotency-Key is looked at (key, rate limit, body checks in
# the gate) or not kept (422, 5xx): never replayed.
NEVER_REPLAYED = {"401", "413", "415", "422", "429"}


def _resolved(response: dict) -> dict:
    reference = response.get("$ref")
    if reference is None:
        return response
    section, name = reference.removeprefix("#/components/").split("/")
    return contract_bundle.served_document()["components"][section][name]


def _replayable_responses():
    for template, item in contract.path_items().items():
        for method in contract.HTTP_METHODS:
            operation = item.get(method)
            if not operation:
                continue
            parameters = [p.get("$ref", p.get("name", "")) for p in operation.get("parameters", [])]
            if not any("IdempotencyKey" in p for p in parameters):
                continue
            for status, response in operation["responses"].items():
                if status in NEVER_REPLAYED or status.startswith("5"):
                    continue
                yield f"{method.upper()} {template} {status}", _resolved(response)


def test_every_replayable_response_declares_the_header():
    responses = dict(_replayable_responses())
    assert {"POST /posts/{postId}/publish 404", "POST /bulk 409", "POST /bulk 403"} <= set(responses)
    undeclared = [name for name, response in responses.items() if "Idempotent-Replayed" not in response.get("headers", {})]
    assert undeclared == []


def test_a_conflict_declares_retry_after():
    conflict = dict(_replayable_responses())["POST /bulk 409"]
    assert "Retry-After" in conflict["headers"]


def _twice(client, url, headers, **kwargs):
    return [client.post(url, headers=headers, **kwargs) for _ in range(2)]


class TestReplayedRefusals:
    def test_a_409_is_replayed_with_the_header(self, client, session, workspace, key):
        published = make_post(session, workspace, status="published")
        first, again = _twice(client, f"/api/v1/posts/{published.id}/publish", {**key.headers, "Idempotency-Key": "c-1"})
        assert first.status_code == again.status_code == 409
        assert "idempotent-replayed" not in first.headers and again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()

    @pytest.mark.parametrize("url", ["/api/v1/bulk", f"/api/v1/posts/{uuid.uuid4()}/publish"])
    def test_a_403_is_replayed_with_the_header(self, client, session, workspace, url):
        reader = make_key(session, workspace, scopes=["posts:read"])
        first, again = _twice(client, url, {**reader.headers, "Idempotency-Key": "r-1"},
                              json={"action": "archive", "postIds": [str(uuid.uuid4())]} if url.endswith("bulk") else None)
        assert first.status_code == again.status_code == 403
        assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()
