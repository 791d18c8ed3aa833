"""POST /bulk: 202 with the operation record and a Location; a malformed request is
422 and starts nothing."""
import uuid

import pytest
from sqlalchemy import func, select

from persistence.models import BulkOperation
from tests.bulk.conftest import URL, later, new_post, start, started
from tests.posts.helpers import assert_validation_error


def operation_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(BulkOperation)).scalar_one()


def ids(count: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(count)]


class TestCreateOperation:
    def test_answers_202_with_the_pending_operation(self, client, key, jobs):
        post_id = new_post(client, key)
        response = start(client, key, action="archive", postIds=[post_id])
        assert response.status_code == 202, response.text
        data = response.json()["data"]
        assert response.headers["location"] == f"{URL}/{data['id']}"
        assert data["action"] == "archive"
        assert data["status"] == "pending"
        assert (data["total"], data["processed"], data["succeeded"], data["failed"]) == (1, 0, 0, 0)
        assert data["errors"] == []
        assert data["livemode"] is False
        assert data["startedAt"] is None and data["completedAt"] is None
        assert jobs.held() == 1

    def test_five_hundred_posts_are_accepted(self, client, session, key):
        body_ids = ids(500)
        data = started(client, key, action="delete", postIds=body_ids)
        assert data["total"] == 500
        session.expire_all()
        stored = session.get(BulkOperation, uuid.UUID(data["id"]))
        assert [post_id for post_id, _ in stored.entries] == body_ids

    def test_items_carry_a_time_each(self, client, key):
        data = started(client, key, action="schedule", items=[
            {"postId": str(uuid.uuid4()), "scheduledAt": later(days=1)},
            {"postId": str(uuid.uuid4()), "scheduledAt": later(days=2)},
        ])
        assert data["total"] == 2

    def test_the_same_idempotency_key_replays_the_same_operation(self, client, session, key):
        headers = {**key.headers, "Idempotency-Key": "bulk-archive-1"}
        body = {"action": "archive", "postIds": ids(3)}
        first = client.post(URL, headers=headers, json=body)
        again = client.post(URL, headers=headers, json=body)
        assert first.status_code == again.status_code == 202
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["data"]["id"] == first.json()["data"]["id"]
        assert operation_count(session) == 1


class TestMalformedRequests:
    @pytest.mark.parametrize(
        "body, field",
        [
            ({"action": "delete", "postIds": ids(501)}, "postIds"),
            ({"action": "schedule", "items": [{"postId": i, "scheduledAt": "2030-01-01T00:00:00Z"} for i in ids(501)]}, "items"),
            ({"action": "delete", "postIds": []}, "postIds"),
            ({"action": "schedule", "postIds": ids(2)}, "scheduledAt"),
            ({"action": "reschedule", "postIds": ids(2)}, "scheduledAt"),
            ({"action": "delete", "postIds": ids(1), "scheduledAt": "2030-01-01T00:00:00Z"}, "scheduledAt"),
            ({"action": "publish", "items": [{"postId": str(uuid.uuid4()), "scheduledAt": "2030-01-01T00:00:00Z"}]}, "items"),
            ({"action": "schedule", "postIds": ids(1), "items": [{"postId": str(uuid.uuid4()), "scheduledAt": "2030-01-01T00:00:00Z"}]}, "items"),
            ({"action": "schedule", "postIds": ids(1), "scheduledAt": "2001-01-01T00:00:00Z"}, "scheduledAt"),
            ({"action": "schedule", "postIds": ids(1), "scheduledAt": "2030-01-01T00:00:00"}, "scheduledAt"),
            ({"action": "archive"}, "postIds"),
            ({"action": "explode", "postIds": ids(1)}, "action"),
            ({"postIds": ids(1)}, "action"),
            ({"action": "delete", "postIds": ids(1), "mediaUrls": ["https://example.com/a.png"]}, "mediaUrls"),
            ({"action": "delete", "postIds": ids(1), "colour": "blue"}, "colour"),
        ],
        ids=[
            "501 posts", "501 items", "no posts", "schedule without time", "reschedule without time",
            "time for delete", "items for publish", "both postIds and items", "time in the past",
            "time without offset", "neither postIds nor items", "unknown action", "no action", "mediaUrls",
            "unknown field",
        ],
    )
    def test_is_422_and_starts_nothing(self, client, session, key, jobs, body, field):
        response = start(client, key, **body)
        error = assert_validation_error(response)
        fields = [detail["field"] for detail in error.get("details", [])]
        assert any(field in name for name in fields) or field in error["message"], error
        assert operation_count(session) == 0
        assert jobs.held() == 0

    def test_a_post_named_twice_is_422(self, client, session, key):
        post_id = str(uuid.uuid4())
        assert_validation_error(start(client, key, action="delete", postIds=[post_id, post_id]))
        error = assert_validation_error(start(client, key, action="schedule", items=[
            {"postId": post_id, "scheduledAt": later(days=1)}, {"postId": post_id, "scheduledAt": later(days=2)},
        ]), field="items[1]")
        assert post_id in error["message"]
        assert operation_count(session) == 0

    def test_an_item_time_in_the_past_names_the_item(self, client, key):
        assert_validation_error(start(client, key, action="reschedule", items=[
            {"postId": str(uuid.uuid4()), "scheduledAt": later(days=1)},
            {"postId": str(uuid.uuid4()), "scheduledAt": "2001-01-01T00:00:00Z"},
        ]), field="items[1].scheduledAt")
