"""A NUL character in any string of a JSON request body (or in a member name) is a
422 validation_error naming the field, on every operation, and changes nothing.
PostgreSQL cannot store one: unchecked, it was a 500 there."""
import pytest

from tests.support.errors import assert_envelope
from tests.support.factories import make_post
from tests.support.posts import post_count

NUL_MESSAGE = "must not contain the NUL character"


def refused(response, *fields):
    body = assert_envelope(response, 422, "validation_error")
    named = [detail["field"] for detail in body["error"]["details"] if NUL_MESSAGE in detail["message"]]
    assert named == list(fields), body
    return body


@pytest.mark.parametrize(
    "body, field",
    [
        ({"content": "Hello\x00", "platforms": ["twitter"]}, "content"),
        ({"content": "Hello", "platforms": ["twit\x00ter"]}, "platforms[0]"),
        ({"content": "Hello", "platforms": ["twitter"], "scheduledAt": "2030-01-01T09:00:00Z\x00"}, "scheduledAt"),
        ({"content": "Hello", "platforms": ["twitter"], "no\x00te": "x"}, "no\\u0000te"),
    ],
)
def test_create_post(client, session, key, body, field):
    response = refused(client.post("/api/v1/posts", headers=key.headers, json=body), field)
    assert "\x00" not in response["error"]["message"]
    assert post_count(session) == 0


def test_every_field_with_a_nul_is_named(client, key):
    body = {"content": "a\x00", "platforms": ["twitter", "x\x00"]}
    refused(client.post("/api/v1/posts", headers=key.headers, json=body), "content", "platforms[1]")


def test_update_post(client, session, key, workspace):
    post = make_post(session, workspace)
    refused(client.patch(f"/api/v1/posts/{post.id}", headers=key.headers, json={"content": "Changed\x00"}), "content")
    session.expire_all()
    assert client.get(f"/api/v1/posts/{post.id}", headers=key.headers).json()["data"]["content"] == "Hello from the tests"


def test_first_comment(client, session, key, workspace):
    post = make_post(session, workspace)
    response = client.put(f"/api/v1/posts/{post.id}/first-comment", headers=key.headers, json={"content": "\x00"})
    refused(response, "content")


def test_bulk(client, key):
    response = client.post("/api/v1/bulk", headers=key.headers, json={"action": "delete", "postIds": ["\x00abc"]})
    refused(response, "postIds[0]")
