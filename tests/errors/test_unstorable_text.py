"""Text the database cannot store is refused at the edge, on every operation of the
contract, wherever it is put: a NUL, or a lone UTF-16 surrogate (JSON can name one
with a `\\ud800` escape; psycopg cannot encode it, so it was a 500 when stored, and a
bulk operation naming one was accepted and then crashed on every run).

The property, checked with Hypothesis over `socialpub.contract.operations()`: put
either character anywhere in any string of a request that is otherwise as the
contract describes it, and the answer is

- in a JSON body (values and member names, every string property the schema
  declares): 422 validation_error naming that field;
- in a query parameter: 422 validation_error naming `query.<name>`. A surrogate
  cannot travel in a URL as itself: it is sent as its UTF-8 form (`%ED%A0%80`),
  which is not UTF-8, and that is what is refused;
- in a path parameter: 404 resource_not_found. The contract's path parameters are
  identifiers, and a malformed identifier names no record (404, as `/posts/abc`
  is); every operation with a path parameter declares 404, as checked below;

never a 500, the status is one the operation declares, and nothing is stored.
"""
from __future__ import annotations

import copy
import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import select

from persistence.models import Base
from socialpub import contract
from socialpub.accounts import service as accounts
from socialpub.areas import import_models
from socialpub.validation import NOT_UTF8_REFUSED, NUL_REFUSED, SURROGATE_REFUSED, escaped, field_path
from tests.support.contract import declarations, inline_refs
from tests.support.errors import assert_envelope
from tests.support.factories import make_bulk_operation, make_post
from tests.support.factories import OPERATOR

import_models()

POISONS = st.one_of(st.just("\x00"), st.integers(0xD800, 0xDFFF).map(chr))
BODY_MESSAGES = {NUL_REFUSED, SURROGATE_REFUSED}
QUERY_MESSAGES = {NUL_REFUSED, NOT_UTF8_REFUSED}
FUTURE = "2030-01-01T09:00:00Z"


def string_parameters(operation, spec) -> list[dict]:
    item = spec["paths"][operation.path]
    params = item.get("parameters", []) + item[operation.method.lower()].get("parameters", [])
    return [p for p in params if p["in"] in ("query", "path") and p.get("schema", {}).get("type") == "string"]


def covered(spec) -> list:
    return [o for o in contract.operations() if o.has_body or string_parameters(o, spec)]


# --- Bodies: every string the contract lets a body hold -----------------------------

def sample(schema: dict):
    """A value of `schema`, for a property the example leaves out: enough to carry a
    string, not necessarily one the service accepts (what is refused here is refused
    before anything else is checked)."""
    if "example" in schema:
        return copy.deepcopy(schema["example"])
    kind = schema.get("type")
    if kind == "string":
        if "enum" in schema:
            return schema["enum"][0]
        return FUTURE if schema.get("format") == "date-time" else "text"
    if kind == "array":
        return [sample(schema.get("items", {}))]
    if kind == "object":
        return {name: sample(sub) for name, sub in schema.get("properties", {}).items() if "type" in sub}
    if kind == "integer" or kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return None


def completed(value, schema: dict):
    """The example with every string-carrying property the schema declares added."""
    if isinstance(value, dict) and schema.get("type") == "object":
        result = {}
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                result[name] = completed(value[name], sub)
            elif "type" in sub:  # a property without a type holds no string
                result[name] = sample(sub)
        result.update({name: item for name, item in value.items() if name not in result})
        return result
    if isinstance(value, list) and schema.get("type") == "array":
        return [completed(item, schema.get("items", {})) for item in value]
    return value


def string_slots(value, path=()):
    """("value", path) for every string and ("key", path) for every member name."""
    if isinstance(value, str):
        yield "value", path
    elif isinstance(value, dict):
        for name, item in value.items():
            yield "key", path + (name,)
            yield from string_slots(item, path + (name,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from string_slots(item, path + (index,))


def poisoned_body(body, slot, poison: str, at: int):
    """(the body with `poison` put into the slot at position `at`, the field to be named)."""
    kind, path = slot
    body = copy.deepcopy(body)
    parent = body
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1] if path else None
    if kind == "value":
        text = parent[last] if path else body
        new = text[: at % (len(text) + 1)] + poison + text[at % (len(text) + 1):]
        if not path:
            return new, "body"
        parent[last] = new
        return body, field_path(path)
    new_name = last[: at % (len(last) + 1)] + poison + last[at % (len(last) + 1):]
    parent[new_name] = parent.pop(last)
    return body, field_path(path[:-1] + (escaped(new_name),))


def body_schema(operation, spec) -> dict:
    return spec["paths"][operation.path][operation.method.lower()]["requestBody"]["content"]["application/json"]["schema"]


def base_body(operation, spec):
    schema = body_schema(operation, spec)
    example = operation.body_example if operation.body_example is not None else schema.get("example")
    assert example is not None, f"{operation.operation_id}: the contract gives no example body"
    return completed(copy.deepcopy(example), schema)


# --- The world the requests meet, and proof that they changed nothing ----------------

@pytest.fixture
def world(session, workspace):
    """A record for every path parameter, so that without the poison each path names
    something; sandbox accounts made up front (listing them makes them)."""
    post = make_post(session, workspace)
    accounts.ensure_sandbox_accounts(session=session, workspace_id=workspace.id)
    session.commit()
    account = accounts.workspace_accounts(session=session, actor=OPERATOR, workspace_id=workspace.id, livemode=False)[0]
    operation = make_bulk_operation(session, workspace)
    known = {"postId": str(post.id), "accountId": str(account.id), "operationId": str(operation.id)}
    # Every other path parameter: a record made as the generated contract tests make it.
    for name, factory in declarations().record_factories.items():
        known.setdefault(name, str(factory.make(session, workspace, False)))
    return known


def snapshot(session) -> dict:
    session.expire_all()
    return {
        table.name: sorted(map(repr, session.execute(select(table)).all()))
        for table in Base.metadata.sorted_tables
    }


def test_every_operation_with_a_path_parameter_declares_404(client):
    spec = inline_refs(client.get("/api/v1/openapi.json").json())
    for operation in contract.operations():
        if operation.path_params:
            declared = spec["paths"][operation.path][operation.method.lower()]["responses"]
            assert "404" in declared, operation.operation_id


def test_the_contract_gives_every_body_an_example(client):
    spec = inline_refs(client.get("/api/v1/openapi.json").json())
    for operation in covered(spec):
        if operation.has_body:
            assert list(string_slots(base_body(operation, spec))), operation.operation_id


@pytest.fixture
def used_key(client, key):
    """The key after a first request: a key notes when it was last used (at most once
    a minute), and after that nothing may change."""
    assert client.get("/api/v1/posts", headers=key.headers).status_code == 200
    return key


def test_lone_surrogates_and_nul_are_refused_everywhere(client, session, used_key, world):
    key = used_key
    spec = inline_refs(client.get("/api/v1/openapi.json").json())
    operations = covered(spec)
    assert {o.operation_id for o in operations} >= {
        "createPost", "updatePost", "setFirstComment", "createOperation",
        "listPosts", "getPost", "getAccount", "getOperation",
    }
    before = snapshot(session)

    @settings(
        max_examples=150,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def refused(data):
        operation = data.draw(st.sampled_from(operations), label="operation")
        params = string_parameters(operation, spec)
        body = base_body(operation, spec) if operation.has_body else None
        slots = [("param", p["name"]) for p in params]
        slots += [("body", slot) for slot in string_slots(body)] if body is not None else []
        where, slot = data.draw(st.sampled_from(slots), label="slot")
        poison = data.draw(POISONS, label="poison")
        at = data.draw(st.integers(0, 40), label="at")

        path_values = {name: world[name] for name in operation.path_params}
        query = ""
        expected = None
        if where == "body":
            body, field = poisoned_body(body, slot, poison, at)
            expected = (422, "validation_error", field, BODY_MESSAGES)
        else:
            param = next(p for p in params if p["name"] == slot)
            schema = param["schema"]
            value = world[slot] if param["in"] == "path" else schema.get("enum", ["text"])[0]
            value = value[: at % (len(value) + 1)] + poison + value[at % (len(value) + 1):]
            # As a client would send it: UTF-8, percent-encoded (a surrogate has a
            # UTF-8 form only by `surrogatepass`; it is what a careless encoder sends).
            encoded = quote(value.encode("utf-8", "surrogatepass"), safe="")
            if param["in"] == "path":
                path_values[slot] = encoded
                expected = (404, "resource_not_found", None, None)
            else:
                query = f"?{slot}={encoded}"
                expected = (422, "validation_error", f"query.{slot}", QUERY_MESSAGES)

        path = "/api/v1" + operation.path.format(**path_values) + query
        if body is None:
            response = client.request(operation.method, path, headers=key.headers)
        else:
            # json= would refuse a lone surrogate; the escape is what travels.
            response = client.request(
                operation.method, path, headers={**key.headers, "Content-Type": "application/json"},
                content=json.dumps(body).encode(),
            )
        status, code, field, messages = expected
        assert response.status_code != 500, response.text
        declared = spec["paths"][operation.path][operation.method.lower()]["responses"]
        assert str(response.status_code) in declared, (operation.operation_id, response.status_code)
        payload = assert_envelope(response, status, code)
        if field is not None:
            named = {d["field"]: d["message"] for d in payload["error"].get("details", [])}
            assert named.get(field) in messages, (operation.operation_id, field, payload)
        assert snapshot(session) == before, operation.operation_id

    refused()


@pytest.mark.parametrize(
    "method, path, body, field",
    [
        ("POST", "/api/v1/posts", b'{"content": "a\\ud800b", "platforms": ["twitter"]}', "content"),
        ("PATCH", "/api/v1/posts/{post}", b'{"content": "a\\udfffb"}', "content"),
        ("PUT", "/api/v1/posts/{post}/first-comment", b'{"content": "\\ud83d"}', "content"),
        ("POST", "/api/v1/bulk", b'{"action": "delete", "postIds": ["\\ud800"]}', "postIds[0]"),
    ],
)
def test_the_cases_that_were_500s(client, session, used_key, world, method, path, body, field):
    key = used_key
    before = snapshot(session)
    response = client.request(
        method, path.format(post=world["postId"]), headers={**key.headers, "Content-Type": "application/json"}, content=body
    )
    payload = assert_envelope(response, 422, "validation_error")
    assert payload["error"]["details"] == [{"field": field, "message": SURROGATE_REFUSED}]
    assert snapshot(session) == before


def test_a_surrogate_pair_is_one_character_and_is_kept(client, key):
    response = client.post(
        "/api/v1/posts", headers={**key.headers, "Content-Type": "application/json"},
        content=b'{"content": "launch \\ud83d\\ude80", "platforms": ["twitter"]}',
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["content"] == "launch \U0001F680"
