"""/mcp as an HTTP endpoint: the API's key, plan, body and rate-limit rules, in the
API's error envelope, before any MCP message is read."""
from __future__ import annotations

import pytest

from tests.support.factories import make_key, make_workspace

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "tests", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def post(client, headers=None, **kwargs):
    kwargs.setdefault("json", INITIALIZE)
    return client.post("/mcp", headers={**ACCEPT, **(headers or {})}, **kwargs)


@pytest.mark.parametrize("authorization", [None, "Bearer svc_test_" + "x" * 40, "Basic abc"])
def test_without_a_valid_key_401_in_the_envelope(client, authorization):
    response = post(client, {"Authorization": authorization} if authorization else {})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_a_workspace_off_the_api_plans_is_403(client, session):
    free = make_key(session, make_workspace(session, name="Free", plan="free"))
    response = post(client, free.headers)
    assert response.status_code == 403 and response.json()["error"]["code"] == "plan_not_eligible"


def test_initialize_answers_json(client, key):
    response = post(client, key.headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["serverInfo"]["name"] == "socialpub"
    assert "tools" in response.json()["result"]["capabilities"]
    assert "X-Request-Id" in response.headers


def test_only_post(client, key):
    response = client.get("/mcp", headers={**key.headers, "Accept": "text/event-stream"})
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_body_must_be_json(client, key):
    response = post(client, key.headers, json=None, content=b"hello", )
    assert response.status_code == 415


def call(client, key, number, name="listPosts", arguments=None):
    message = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
               "params": {"name": name, "arguments": arguments or {}}}
    return post(client, key.headers, json=message)


def test_tool_calls_count_as_their_api_requests_and_protocol_messages_do_not(client, session, workspace):
    limited = make_key(session, workspace, per_minute=2)
    for _ in range(5):
        assert post(client, limited.headers).status_code == 200
    first = call(client, limited, 2)
    assert first.json()["result"]["isError"] is False
    assert first.headers["X-RateLimit-Remaining"] == "1"
    assert call(client, limited, 3).json()["result"]["isError"] is False
    refused = call(client, limited, 4)
    # The tool's error, not the HTTP exchange's: the agent reads it and waits.
    assert refused.status_code == 200 and refused.json()["result"]["isError"] is True
    assert refused.json()["result"]["structuredContent"]["error"]["code"] == "rate_limit_exceeded"
    assert client.get("/api/v1/posts", headers=limited.headers).status_code == 429


def test_requests_without_a_valid_key_count_against_the_address(client, app, monkeypatch):
    limiter = app.app.extensions["socialpub"].rate_limiter
    counted = []
    original = limiter.hit
    monkeypatch.setattr(limiter, "hit", lambda identity, windows: counted.append(identity) or original(identity, windows))
    post(client, {"Authorization": "Bearer svc_test_" + "y" * 40})
    assert counted and counted[0].startswith("address:")


def test_the_mcp_path_is_not_part_of_the_contract(client, key):
    response = client.get("/api/v1/openapi.json")
    assert not any(path.startswith("/mcp") for path in response.json()["paths"])
