"""Generated from the contract: every operation in openapi/ is covered the moment it
enters the spec. No key -> 401; every scope but the required one -> 403; the required
scope alone -> the operation's documented success; another workspace's or the other
mode's record -> 404. The records come from each area's tests/<area>/contract.py
(tests/support/contract.py says what goes there)."""
from __future__ import annotations

import uuid

import pytest

from socialpub import contract
from socialpub.scopes import ALL_SCOPES
from tests.support.contract import SuccessRequest, area_file, declarations
from tests.support.factories import make_key, make_workspace

OPERATIONS = contract.operations()
RECORD_OPERATIONS = [
    op for op in OPERATIONS
    if any(getattr(declarations().record_factories.get(name), "tenant_record", True) for name in op.path_params)
]


def record_factory(operation, name):
    factory = declarations().record_factories.get(name)
    if factory is None:
        pytest.fail(
            f"{operation.operation_id} names {{{name}}} in its path, and no area says how to make that record: "
            f'add RECORD_FACTORIES = {{"{name}": RecordFactory(make=..., find=...)}} to '
            f"{area_file(operation.area)} (see tests/support/contract.py)"
        )
    return factory


def success_statuses(operation) -> set[int]:
    """The 2xx responses the spec declares for the operation (most declare one; a
    chat message answers 201 when it starts a conversation, 200 when it continues one)."""
    responses = contract.path_items()[operation.path][operation.method.lower()]["responses"]
    declared = {int(code) for code in responses if str(code).startswith("2")}
    assert declared, f"{operation.operation_id} declares no 2xx response"
    return declared


def call(client, operation, headers, path_values=None, body=None, query=None):
    path = operation.path
    for name in operation.path_params:
        path = path.replace("{" + name + "}", str((path_values or {}).get(name, uuid.uuid4())))
    options = {"headers": headers, "params": query or {}}
    if operation.has_body:
        options["json"] = body if body is not None else operation.body_example or {}
    return client.request(operation.method, "/api/v1" + path, **options)


def assert_error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body


def test_every_path_parameter_has_a_record_factory():
    missing = {
        name: area_file(op.area)
        for op in OPERATIONS for name in op.path_params if name not in declarations().record_factories
    }
    assert not missing, "add RECORD_FACTORIES for these path parameters to these files: " + ", ".join(
        f"{{{name}}} -> {file}" for name, file in sorted(missing.items())
    )


def test_the_areas_declare_only_what_the_spec_has():
    names = {name for op in OPERATIONS for name in op.path_params}
    handlers = {op.handler for op in OPERATIONS}
    found = declarations()
    stale = [name for name in found.record_factories if name not in names]
    stale += [handler for handler in found.success_requests if handler not in handlers]
    assert not stale, "declared for what the spec no longer has: " + ", ".join(
        f"{name} in {found.declared_in[name]}" for name in stale
    )


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
        expected = success_statuses(operation)
        make_request = declarations().success_requests.get(operation.handler)
        request = make_request(session, workspace) if make_request else SuccessRequest()
        path_values = {
            name: request.path_values.get(name) or record_factory(operation, name).make(session, workspace, False)
            for name in operation.path_params
        }
        key = make_key(session, workspace, scopes=list(operation.scopes))
        response = call(client, operation, key.headers, path_values, body=request.body, query=request.query)
        assert response.status_code in expected, response.text

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
            factory = record_factory(operation, name)
            values[name] = factory.make(session, owner, livemode)
            readers[name] = factory.find
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
    @staticmethod
    def list_path(operation, session, workspace) -> str:
        """The list's path, with its parent record (a conversation's messages) made."""
        path = operation.path
        for name in operation.path_params:
            path = path.replace("{" + name + "}", str(record_factory(operation, name).make(session, workspace, False)))
        return "/api/v1" + path

    @staticmethod
    def needed_query(operation, session, workspace) -> dict:
        """The query a list needs to answer at all (a search's `q`), from its success request."""
        make_request = declarations().success_requests.get(operation.handler)
        return make_request(session, workspace).query if make_request else {}

    def test_the_largest_offset_is_an_empty_page(self, client, session, workspace, key, operation):
        response = client.get(self.list_path(operation, session, workspace), headers=key.headers,
                              params={**self.needed_query(operation, session, workspace), "offset": 2147483647})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] == [] and body["pagination"]["offset"] == 2147483647
        assert body["pagination"]["hasNextPage"] is False

    @pytest.mark.parametrize("offset", [2147483648, 2**63, 10**30])
    def test_an_offset_beyond_it_is_422(self, client, session, workspace, key, operation, offset):
        response = client.get(self.list_path(operation, session, workspace), headers=key.headers,
                              params={**self.needed_query(operation, session, workspace), "offset": offset})
        assert_error(response, 422, "validation_error")


# What every operation can answer whatever it does: the gate (413 over the size cap,
# 415 for a body that is not JSON or that the operation does not take, 429), the key
# (401, 403), validation (422: unknown query parameters everywhere) and failures (500,
# 503); a path naming a record adds 404, and a change of state adds 409.
EVERY_OPERATION_ANSWERS = {"401", "403", "413", "415", "422", "429", "500", "503"}


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.operation_id)
def test_declares_every_status_it_can_answer(operation):
    declared = set(contract.path_items()[operation.path][operation.method.lower()]["responses"])
    expected = set(EVERY_OPERATION_ANSWERS)
    if operation.path_params:
        expected.add("404")
    if operation.method in ("POST", "PUT", "PATCH"):
        expected.add("409")
    assert expected <= declared, f"{operation.operation_id} does not declare {sorted(expected - declared)}"


BODYLESS_OPERATIONS = [op for op in OPERATIONS if not op.has_body]


@pytest.mark.parametrize("operation", BODYLESS_OPERATIONS, ids=lambda op: op.operation_id)
def test_a_body_where_none_is_taken_is_415_and_changes_nothing(client, session, workspace, key, operation):
    values = {name: record_factory(operation, name).make(session, workspace, False) for name in operation.path_params}
    path = operation.path
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
    response = client.request(operation.method, "/api/v1" + path, headers=key.headers, json={"content": "Meant"})
    body = assert_error(response, 415, "unsupported_media_type")
    assert "no request body" in body["error"]["message"]
    session.expire_all()
    for name, record_id in values.items():
        assert record_factory(operation, name).find(session, record_id) is not None, "a refused request changed the record"
