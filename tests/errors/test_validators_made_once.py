"""Request validation makes each schema's validator once, not per request: connexion
builds a jsonschema validator for every parameter (after a deep copy of it) and every
body, on every request. The answers stay the same: a parameter or body refused names
its field in our envelope, on the first request and on every later one."""
from __future__ import annotations

import pytest

from socialpub import validation


@pytest.fixture
def validators_made(monkeypatch):
    made: list[str] = []
    for name in ("_parameter_validator", "_body_validator"):
        compiled = getattr(validation, name)
        make = compiled._make

        def counted(schema, make=make, name=name):
            made.append(name)
            return make(schema)

        monkeypatch.setattr(compiled, "_make", counted)
        monkeypatch.setattr(compiled, "_by_id", {})
    return made


def test_each_schema_is_compiled_once(client, key, validators_made):
    body = {"content": "Made once", "platforms": ["twitter"]}
    first = [client.get("/api/v1/posts?limit=5&offset=0", headers=key.headers),
             client.post("/api/v1/posts", json=body, headers=key.headers)]
    assert [r.status_code for r in first] == [200, 201]
    after_first = len(validators_made)
    assert after_first >= 3  # limit, offset and the body, at least
    again = [client.get("/api/v1/posts?limit=7&offset=1", headers=key.headers) for _ in range(3)]
    again += [client.post("/api/v1/posts", json=body, headers=key.headers) for _ in range(3)]
    assert [r.status_code for r in again] == [200] * 3 + [201] * 3
    assert len(validators_made) == after_first


@pytest.mark.parametrize("attempt", range(2))
def test_refusals_are_the_same_every_time(client, key, attempt):
    refused = client.get("/api/v1/posts?limit=0", headers=key.headers)
    assert refused.status_code == 422
    assert refused.json()["error"]["details"] == [
        {"field": "query.limit", "message": "0 is less than the minimum of 1"}
    ]
    body = client.post("/api/v1/posts", json={"content": 5, "platforms": ["twitter"]}, headers=key.headers)
    assert body.status_code == 422
    assert body.json()["error"]["details"][0]["field"] == "content"


def test_the_validators_kept_are_bounded():
    made: list[dict] = []

    def make(schema):
        made.append(schema)
        return object()

    compiled = validation._Compiled(make, limit=3)
    schemas = [{"type": "integer", "minimum": n} for n in range(5)]
    first = compiled(schemas[0])
    assert compiled(schemas[0]) is first and len(made) == 1  # kept
    for schema in schemas[1:]:
        compiled(schema)
    assert len(compiled) <= 3 and len(made) == 5  # full: started again from none
    compiled(schemas[0])
    assert len(made) == 6  # no longer kept: made again
