"""Bodies built to break the JSON parser: nesting deeper than the service reads
(SOCIALPUB_MAX_JSON_DEPTH), integers longer than Python converts, and the
non-JSON constants Python's parser accepts. Each is a 422 validation_error in the
envelope on every operation with a body, and changes nothing. Unchecked, the first
two were a 500 (RecursionError / ValueError escaped the parser)."""
from __future__ import annotations

import sys

import pytest
from sqlalchemy import func, select

from persistence.bulk import BulkOperation
from persistence.posts import Post
from socialpub.app import create_app
from socialpub.config import Settings
from socialpub.contract import operations
from tests.support.errors import assert_envelope
from tests.support.factories import make_post
from tests.support.jobs import HeldQueue
from tests.support.posts import post_count
from tests.support.settings import test_settings
from workers import context as job_context

JSON = {"Content-Type": "application/json"}
BODY_OPERATIONS = [operation for operation in operations() if operation.has_body]


def bulk_count(session) -> int:
    return session.execute(select(func.count()).select_from(BulkOperation)).scalar_one()


def nested(levels: int, leaf: bytes = b"1") -> bytes:
    return b"[" * levels + leaf + b"]" * levels


def in_content(value: bytes) -> bytes:
    """A post body whose `content` is `value` (JSON text): a place the schema checks."""
    return b'{"content": ' + value + b', "platforms": ["twitter"]}'


@pytest.fixture
def post(session, workspace):
    return make_post(session, workspace)


@pytest.fixture
def target(post):
    """A path for each operation with a body: its path parameters name a real post."""

    def path(operation) -> str:
        return "/api/v1" + operation.path.replace("{postId}", str(post.id))

    return path


def unchanged(session, post) -> bool:
    session.expire_all()
    stored = session.get(Post, post.id)
    return stored.content == "Hello from the tests" and stored.first_comment is None


def send(client, key, operation, path, body: bytes):
    return client.request(operation.method, path, headers={**key.headers, **JSON}, content=body)


def test_every_operation_with_a_body_is_covered():
    assert {o.operation_id for o in BODY_OPERATIONS} >= {
        "createPost", "updatePost", "setFirstComment", "createOperation",
    }


@pytest.mark.parametrize("operation", BODY_OPERATIONS, ids=lambda o: o.operation_id)
@pytest.mark.parametrize(
    "body, says",
    [
        (nested(10_000), "nested more than 64 levels"),
        (in_content(nested(10_000)), "nested more than 64 levels"),
        (in_content(nested(65)), "nested more than 64 levels"),
        (b'{"content": ' + b"9" * 5_000 + b"}", "digits"),
        (in_content(b"1" * (sys.get_int_max_str_digits() + 1)), "digits"),
        (in_content(b"NaN"), "not valid JSON"),
        (in_content(b"-Infinity"), "not valid JSON"),
    ],
    ids=["deep-array", "deep-in-a-field", "one-level-too-deep", "huge-integer", "just-over-the-digit-limit", "nan", "infinity"],
)
def test_hostile_body_is_422(client, session, key, post, target, operation, body, says):
    response = send(client, key, operation, target(operation), body)
    payload = assert_envelope(response, 422, "validation_error")
    assert says in payload["error"]["message"], payload
    assert post_count(session) == 1 and bulk_count(session) == 0
    assert unchanged(session, post)


def test_nesting_up_to_the_limit_reaches_the_schema_checks(client, session, key):
    # 64 levels: read, then refused by the schema (content is a string), not by the parser.
    response = client.post("/api/v1/posts", headers={**key.headers, **JSON}, content=in_content(nested(63)))
    payload = assert_envelope(response, 422, "validation_error")
    assert "nested" not in payload["error"]["message"]
    assert [d["field"] for d in payload["error"]["details"]] == ["content"]
    assert post_count(session) == 0


def test_deep_nesting_is_refused_before_the_idempotency_record_is_kept(client, session, key):
    headers = {**key.headers, **JSON, "Idempotency-Key": "hostile-json-1"}
    first = client.post("/api/v1/posts", headers=headers, content=nested(10_000))
    assert_envelope(first, 422, "validation_error")
    # A 422 is not kept: the corrected request with the same key goes through.
    second = client.post("/api/v1/posts", headers=headers, json={"content": "Fixed", "platforms": ["twitter"]})
    assert second.status_code == 201, second.text


class TestTheDepthIsASetting:
    @pytest.fixture
    def shallow_app(self, app_with):
        return app_with(max_json_depth=3)

    def test_a_lower_limit_is_applied_and_named(self, shallow_app, session, key):
        with shallow_app.test_client() as client:
            response = client.post(
                "/api/v1/posts", headers={**key.headers, **JSON},
                content=b'{"content": "x", "platforms": ["twitter"], "extra": {"a": [{"b": 1}]}}',
            )
        payload = assert_envelope(response, 422, "validation_error")
        assert "nested more than 3 levels" in payload["error"]["message"]
        assert post_count(session) == 0

    def test_bodies_within_the_limit_pass(self, shallow_app, key):
        with shallow_app.test_client() as client:
            response = client.post("/api/v1/posts", headers=key.headers, json={"content": "x", "platforms": ["twitter"]})
        assert response.status_code == 201, response.text

    def test_read_from_the_environment(self, monkeypatch):
        monkeypatch.setenv("SOCIALPUB_MAX_JSON_DEPTH", "12")
        assert Settings.from_env().max_json_depth == 12
        monkeypatch.delenv("SOCIALPUB_MAX_JSON_DEPTH")
        assert Settings.from_env().max_json_depth == 64


@pytest.fixture
def app_with(database_url, db, _apps):
    """An app whose settings differ from the suite's in `changes` (built once per settings)."""
    saved = (job_context._database, job_context._queue, job_context._settings)

    def build(**changes):
        settings = test_settings(database_url, **changes)
        application = _apps.get(settings)
        if application is None:
            application = _apps[settings] = create_app(settings, database=db)
        runtime = application.app.extensions["socialpub"]
        runtime.database = db
        runtime.queue = HeldQueue()
        job_context.install(db, queue=runtime.queue, settings=settings)
        return application

    yield build
    job_context._database, job_context._queue, job_context._settings = saved
