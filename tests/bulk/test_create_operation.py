"""POST /bulk: 202 with the operation record and a Location; a malformed request is
422 and starts nothing."""
import uuid

import pytest
from sqlalchemy import func, select

from persistence.bulk import BulkOperation
from persistence.events import Event
from tests.support.bulk import URL, later, new_post, operation, post_of, start, started
from tests.support.posts import assert_validation_error


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
        ]), field="items[1].postId")
        assert post_id in error["message"]
        assert operation_count(session) == 0

    @pytest.mark.parametrize("action, timed", [("publish", False), ("delete", False), ("reschedule", True),
                                               ("schedule", True), ("archive", False)])
    @pytest.mark.parametrize("spelling", ["upper case", "hex", "braces", "urn"])
    def test_two_spellings_of_one_id_are_a_post_named_twice(self, client, session, key, jobs, action, timed, spelling):
        post_id = new_post(client, key, scheduled_in_days=1 if action == "reschedule" else None)
        other = {
            "upper case": post_id.upper(), "hex": uuid.UUID(post_id).hex, "braces": "{" + post_id + "}",
            "urn": f"urn:uuid:{post_id}",
        }[spelling]
        unrelated = str(uuid.uuid4())
        body = {"action": action, "postIds": [post_id, unrelated, other]}
        if timed:
            body["scheduledAt"] = later(days=2)
        error = assert_validation_error(start(client, key, **body), field="postIds[2]")
        assert other in error["message"] and "postIds[0]" in error["message"] and post_id in error["message"]
        if timed:
            items = [{"postId": other, "scheduledAt": later(days=2)}, {"postId": post_id, "scheduledAt": later(days=3)}]
            assert_validation_error(start(client, key, action=action, items=items), field="items[1].postId")
        assert operation_count(session) == 0
        assert jobs.held() == 0
        assert post_of(client, key, post_id).status_code == 200

    def test_publishing_under_three_spellings_is_refused_and_publishes_nothing(self, client, session, key, jobs):
        post_id = new_post(client, key)
        spellings = [post_id, post_id.upper(), uuid.UUID(post_id).hex]
        assert_validation_error(start(client, key, action="publish", postIds=spellings), field="postIds[1]")
        jobs.run()
        session.expire_all()
        scheduled = session.execute(select(func.count()).select_from(Event).where(Event.type == "post.scheduled")).scalar_one()
        assert scheduled == 0
        assert post_of(client, key, post_id).json()["data"]["status"] == "draft"

    def test_another_spelling_names_the_post_and_errors_repeat_the_id_as_sent(self, client, key, jobs):
        draft, scheduled = new_post(client, key), new_post(client, key, scheduled_in_days=1)
        data = started(client, key, action="delete", postIds=[draft.upper(), uuid.UUID(scheduled).hex, "not-a-post"])
        jobs.run()
        done = operation(client, key, data["id"])
        assert (done["succeeded"], done["failed"]) == (2, 1)
        assert [(e["postId"], e["code"]) for e in done["errors"]] == [("not-a-post", "resource_not_found")]
        assert post_of(client, key, draft).status_code == post_of(client, key, scheduled).status_code == 404

    def test_ids_that_are_not_uuids_are_compared_as_sent(self, client, key, jobs):
        data = started(client, key, action="archive", postIds=["not-a-post", "NOT-A-POST"])
        jobs.run()
        done = operation(client, key, data["id"])
        assert [(e["postId"], e["code"]) for e in done["errors"]] == [
            ("not-a-post", "resource_not_found"), ("NOT-A-POST", "resource_not_found"),
        ]
        error = assert_validation_error(start(client, key, action="schedule", items=[
            {"postId": "not-a-post", "scheduledAt": later(days=1)}, {"postId": "not-a-post", "scheduledAt": later(days=2)},
        ]), field="items[1].postId")
        assert "not-a-post" in error["message"]

    @pytest.mark.parametrize("value", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+01:00"])
    def test_a_time_beyond_the_calendar_in_utc_is_422(self, client, session, key, jobs, value):
        assert_validation_error(start(client, key, action="schedule", postIds=ids(1), scheduledAt=value),
                                field="scheduledAt", says="Out of range")
        assert_validation_error(start(client, key, action="reschedule", items=[
            {"postId": str(uuid.uuid4()), "scheduledAt": later(days=1)}, {"postId": str(uuid.uuid4()), "scheduledAt": value},
        ]), field="items[1].scheduledAt", says="Out of range")
        assert operation_count(session) == 0
        assert jobs.held() == 0

    def test_an_item_time_in_the_past_names_the_item(self, client, key):
        assert_validation_error(start(client, key, action="reschedule", items=[
            {"postId": str(uuid.uuid4()), "scheduledAt": later(days=1)},
            {"postId": str(uuid.uuid4()), "scheduledAt": "2001-01-01T00:00:00Z"},
        ]), field="items[1].scheduledAt")
