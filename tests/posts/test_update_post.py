import datetime as dt

import pytest

from tests.support.factories import make_post
from tests.support.posts import assert_validation_error

URL = "/api/v1/posts"


def future(days=2):
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=days)).replace(microsecond=0)


class TestUpdatePost:
    def test_changes_content(self, client, session, workspace, key):
        post = make_post(session, workspace)
        response = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"content": "Edited"})
        assert response.status_code == 200
        assert response.json()["data"]["content"] == "Edited"
        session.refresh(post)
        assert post.content == "Edited" and post.status == "draft"

    def test_setting_schedule_on_a_draft_schedules_it(self, client, session, workspace, key):
        post = make_post(session, workspace)
        when = future()
        data = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": when.isoformat()}).json()["data"]
        assert data["status"] == "scheduled"
        assert data["scheduledAt"] == when.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def test_null_schedule_turns_it_back_into_a_draft(self, client, session, workspace, key):
        post = make_post(session, workspace, status="scheduled")
        data = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": None}).json()["data"]
        assert data["status"] == "draft" and data["scheduledAt"] is None

    def test_reschedules_a_scheduled_post(self, client, session, workspace, key):
        post = make_post(session, workspace, status="scheduled")
        when = future(days=5)
        data = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": when.isoformat()}).json()["data"]
        assert data["status"] == "scheduled" and data["scheduledAt"].startswith(when.strftime("%Y-%m-%dT%H:%M:%S"))

    def test_published_post_cannot_be_edited(self, client, session, workspace, key):
        post = make_post(session, workspace, status="published", published_at=dt.datetime.now(dt.timezone.utc))
        response = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"content": "Too late"})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "conflict"
        session.refresh(post)
        assert post.content == "Hello from the tests"

    def test_changing_platforms_rechecks_content_length(self, client, session, workspace, key):
        post = make_post(session, workspace, content="y" * 400, platforms=["linkedin"])
        error = assert_validation_error(
            client.patch(f"{URL}/{post.id}", headers=key.headers, json={"platforms": ["linkedin", "bluesky"]}), "content"
        )
        assert "bluesky" in error["message"]
        session.refresh(post)
        assert post.platforms == ["linkedin"]

    def test_scheduled_live_post_cannot_move_to_a_platform_without_account(self, client, session, workspace, live_key):
        post = make_post(session, workspace, livemode=True, status="scheduled", platforms=["twitter"])
        assert_validation_error(
            client.patch(f"{URL}/{post.id}", headers=live_key.headers, json={"platforms": ["threads"]}), "platforms", "threads"
        )

    @pytest.mark.parametrize(
        "body, field",
        [
            ({}, None),
            ({"scheduledAt": "2001-01-01T00:00:00Z"}, "scheduledAt"),
            ({"scheduledAt": "soon"}, "scheduledAt"),
            ({"content": ""}, "content"),
            ({"mediaUrls": []}, "mediaUrls"),
            ({"status": "published"}, "status"),
            ({"platforms": ["orkut"]}, "platforms[0]"),
        ],
    )
    def test_invalid_update_is_422_and_changes_nothing(self, client, session, workspace, key, body, field):
        post = make_post(session, workspace, status="scheduled")
        before = (post.content, post.status, post.scheduled_at, list(post.platforms))
        assert_validation_error(client.patch(f"{URL}/{post.id}", headers=key.headers, json=body), field)
        session.refresh(post)
        assert (post.content, post.status, post.scheduled_at, list(post.platforms)) == before
