"""Times at the ends of the calendar: a valid ISO 8601 time whose offset takes it
past year 9999 or before year 1 in UTC is a 422 naming the field; a time late in
year 9999 that stays in range is stored, returned and acted on like any other."""
import uuid

import pytest
from sqlalchemy import select

from persistence.events import Event
from persistence.posts import Post
from tests.support.factories import make_post
from tests.support.posts import assert_validation_error, post_count

URL = "/api/v1/posts"

OUT_OF_RANGE = ["9999-12-31T23:59:59-14:00", "9999-12-31T23:30:00-00:31", "0001-01-01T00:00:00+01:00"]
# (sent, as the API returns it)
FAR_BUT_IN_RANGE = [
    ("9999-12-31T00:00:00Z", "9999-12-31T00:00:00.000Z"),
    ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
    ("9999-12-31T23:59:59+14:00", "9999-12-31T09:59:59.000Z"),
]


@pytest.mark.parametrize("value", OUT_OF_RANGE)
class TestOutOfRange:
    def test_creating_is_422_and_stores_nothing(self, client, session, key, value):
        body = {"content": "At the end of time", "platforms": ["twitter"], "scheduledAt": value}
        assert_validation_error(client.post(URL, headers=key.headers, json=body), "scheduledAt", "Out of range")
        assert post_count(session) == 0

    def test_updating_is_422_and_changes_nothing(self, client, session, workspace, key, value):
        post = make_post(session, workspace, status="scheduled")
        before = (post.status, post.scheduled_at)
        response = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": value})
        assert_validation_error(response, "scheduledAt", "Out of range")
        session.refresh(post)
        assert (post.status, post.scheduled_at) == before


@pytest.mark.parametrize("sent, returned", FAR_BUT_IN_RANGE)
class TestFarButInRange:
    def test_is_stored_and_returned_everywhere(self, client, session, key, sent, returned):
        created = client.post(URL, headers=key.headers, json={"content": "Far off", "platforms": ["twitter"], "scheduledAt": sent})
        assert created.status_code == 201, created.text
        post = created.json()["data"]
        assert (post["status"], post["scheduledAt"]) == ("scheduled", returned)
        assert [t["nextAttemptAt"] for t in post["targets"]] == [returned]
        assert client.get(f"{URL}/{post['id']}", headers=key.headers).json()["data"]["scheduledAt"] == returned
        listed = client.get(f"{URL}?status=scheduled", headers=key.headers)
        assert listed.status_code == 200, listed.text
        assert [p["scheduledAt"] for p in listed.json()["data"]] == [returned]
        edited = client.patch(f"{URL}/{post['id']}", headers=key.headers, json={"content": "Still far off"})
        assert edited.status_code == 200 and edited.json()["data"]["scheduledAt"] == returned
        session.expire_all()
        stored = session.get(Post, uuid.UUID(post["id"]))
        assert stored.scheduled_at.year == 9999 and stored.scheduled_at.utcoffset().total_seconds() == 0
        events = session.execute(select(Event).where(Event.type == "post.scheduled")).scalars().all()
        assert [e.data["post"]["scheduledAt"] for e in events] == [returned]

    def test_a_draft_can_be_scheduled_that_far_and_published_now(self, client, session, workspace, key, sent, returned):
        post = make_post(session, workspace)
        response = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": sent})
        assert response.status_code == 200, response.text
        assert response.json()["data"]["scheduledAt"] == returned
        published = client.post(f"{URL}/{post.id}/publish", headers=key.headers)
        assert published.status_code == 202, published.text
        assert published.json()["data"]["scheduledAt"] < "3000"
