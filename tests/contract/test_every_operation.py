"""Generated from the contract: every operation in openapi/ is covered the moment it
enters the spec. No key -> 401; every scope but the required one -> 403; the required
scope alone passes; another workspace's or the other mode's record -> 404."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.bulk import BulkOperation
from persistence.posts import Post
from socialpub import contract
from socialpub.scopes import ALL_SCOPES
from tests.factories import make_bulk_operation, make_key, make_post, make_workspace

OPERATIONS = contract.operations()
RECORD_OPERATIONS = [op for op in OPERATIONS if op.path_params]

# How to make the record a path parameter names, for a given workspace and mode, and
# how to read it back to prove a refused request left it alone.
def _make_account(session, workspace, livemode):
    account = ConnectedAccount(
        workspace_id=workspace.id, livemode=livemode, platform="mastodon", connector="sandbox",
        handle="@isolated", status="active", options={},
    )
    session.add(account)
    session.commit()
    return account.id


RECORD_FACTORIES = {
    "accountId": (
        _make_account,
        lambda session, record_id: session.execute(select(ConnectedAccount).where(ConnectedAccount.id == record_id)).scalar_one_or_none(),
    ),
    "operationId": (
        lambda session, workspace, livemode: make_bulk_operation(session, workspace, livemode=livemode).id,
        lambda session, record_id: session.execute(
            select(BulkOperation).where(BulkOperation.id == record_id, BulkOperation.status == "pending")
        ).scalar_one_or_none(),
    ),
    "postId": (
        lambda session, workspace, livemode: make_post(session, workspace, livemode=livemode).id,
        lambda session, record_id: session.execute(select(Post).where(Post.id == record_id)).scalar_one_or_none(),
    ),
}


def call(client, operation, headers, path_values=None):
    path = operation.path
    for name in operation.path_params:
        path = path.replace("{" + name + "}", str((path_values or {}).get(name, uuid.uuid4())))
    options = {"headers": headers}
    if operation.has_body:
        options["json"] = operation.body_example or {}
    return client.request(operation.method, "/api/v1" + path, **options)


def assert_error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body


def test_every_path_parameter_has_a_record_factory():
    named = {name for op in OPERATIONS for name in op.path_params}
    assert named <= set(RECORD_FACTORIES), f"add a record factory for {named - set(RECORD_FACTORIES)}"


def test_operation_ids_are_unique():
    ids = [op.operation_id for op in OPERATIONS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.operation_id)
class TestEveryOperation:
    def test_requires_exactly_one_known_scope(self, operation):
        assert len(operation.scopes) == 1
        assert operation.scopes[0] in ALL_SCOPES

    def test_no_key_is_401(self, client, operation):
        assert_error(call(client, operation, {}), 401, "invalid_api_key")

    @pytest.mark.parametrize(
        "authorization",
        [
            "Bearer svc_test_doesnotexistdoesnotexistdoesnotexist12",
            "Bearer svc_prod_0123456789abcdefghij0123456789abcdef",
            "Bearer short",
            "Basic dXNlcjpwYXNz",
            "Bearer",
        ],
    )
    def test_invalid_key_is_401(self, client, operation, authorization):
        assert_error(call(client, operation, {"Authorization": authorization}), 401, "invalid_api_key")

    def test_every_other_scope_is_403(self, client, session, workspace, operation):
        required = operation.scopes[0]
        others = [scope for scope in ALL_SCOPES if scope != required]
        for scope in others:
            key = make_key(session, workspace, scopes=[scope])
            body = assert_error(call(client, operation, key.headers), 403, "insufficient_scope")
            assert required in body["error"]["message"]
        every_other = make_key(session, workspace, scopes=others)
        assert_error(call(client, operation, every_other.headers), 403, "insufficient_scope")

    def test_required_scope_alone_is_enough(self, client, session, workspace, operation):
        key = make_key(session, workspace, scopes=list(operation.scopes))
        response = call(client, operation, key.headers)
        assert response.status_code not in (401, 403), response.text
        assert response.status_code < 500, response.text

    @pytest.mark.parametrize("plan", ["free", "pro"])
    def test_plan_without_api_access_is_403(self, client, session, operation, plan):
        workspace = make_workspace(session, plan=plan)
        key = make_key(session, workspace)
        assert_error(call(client, operation, key.headers), 403, "plan_not_eligible")


@pytest.mark.parametrize("operation", RECORD_OPERATIONS, ids=lambda op: op.operation_id)
class TestRecordIsolation:
    def _assert_unreachable(self, client, session, key, operation, owner, livemode):
        values, readers = {}, {}
        for name in operation.path_params:
            make, read = RECORD_FACTORIES[name]
            values[name] = make(session, owner, livemode)
            readers[name] = read
        body = assert_error(call(client, operation, key.headers, values), 404, "resource_not_found")
        assert any(str(value) in body["error"]["message"] for value in values.values())
        session.expire_all()
        for name, record_id in values.items():
            assert readers[name](session, record_id) is not None, "a refused request changed the record"

    def test_another_workspace_record_is_404(self, client, session, key, operation):
        other = make_workspace(session, name="Other Co")
        self._assert_unreachable(client, session, key, operation, other, livemode=False)

    def test_other_mode_record_is_404(self, client, session, workspace, key, live_key, operation):
        self._assert_unreachable(client, session, key, operation, workspace, livemode=True)
        self._assert_unreachable(client, session, live_key, operation, workspace, livemode=False)


POST_OPERATIONS = [op for op in OPERATIONS if op.method == "POST"]


@pytest.mark.parametrize("operation", POST_OPERATIONS, ids=lambda op: op.operation_id)
def test_every_post_takes_an_idempotency_key_and_declares_409(operation):
    item = contract.path_items()[operation.path]
    declared = item["post"]
    names = [p.get("$ref", "").rsplit("/", 1)[-1] for p in declared.get("parameters", [])]
    assert "IdempotencyKey" in names
    assert "409" in declared["responses"]


def _is_paginated(operation) -> bool:
    declared = contract.path_items()[operation.path][operation.method.lower()]
    return any(p.get("$ref", "").endswith("/parameters/Offset") for p in declared.get("parameters", []))


LIST_OPERATIONS = [op for op in OPERATIONS if op.method == "GET" and _is_paginated(op)]


@pytest.mark.parametrize("operation", LIST_OPERATIONS, ids=lambda op: op.operation_id)
class TestEveryList:
    def test_the_largest_offset_is_an_empty_page(self, client, key, operation):
        response = client.get("/api/v1" + operation.path, headers=key.headers, params={"offset": 2147483647})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] == [] and body["pagination"]["offset"] == 2147483647
        assert body["pagination"]["hasNextPage"] is False

    @pytest.mark.parametrize("offset", [2147483648, 2**63, 10**30])
    def test_an_offset_beyond_it_is_422(self, client, key, operation, offset):
        response = client.get("/api/v1" + operation.path, headers=key.headers, params={"offset": offset})
        assert_error(response, 422, "validation_error")
