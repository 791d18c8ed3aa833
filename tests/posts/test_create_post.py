import datetime as dt

import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.posts import Post
from tests.support.posts import assert_validation_error, post_count

URL = "/api/v1/posts"


def future(days=1):
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=days)).isoformat()


class TestCreatePost:
    def test_without_schedule_is_a_draft(self, client, session, key):
        response = client.post(URL, headers=key.headers, json={"content": "Hello", "platforms": ["twitter", "linkedin"]})
        assert response.status_code == 201
        post = response.json()["data"]
        assert post["status"] == "draft"
        assert post["scheduledAt"] is None
        assert post["platforms"] == ["twitter", "linkedin"]
        assert post["livemode"] is False
        assert response.headers["location"] == f"/api/v1/posts/{post['id']}"
        stored = session.get(Post, __import__("uuid").UUID(post["id"]))
        assert stored.content == "Hello" and stored.workspace_id == key.model.workspace_id

    def test_with_schedule_is_scheduled_and_stored_in_utc(self, client, key):
        local = "2031-06-01T09:30:00+02:00"
        response = client.post(URL, headers=key.headers, json={"content": "Hi", "platforms": ["mastodon"], "scheduledAt": local})
        assert response.status_code == 201
        post = response.json()["data"]
        assert post["status"] == "scheduled"
        assert post["scheduledAt"] == "2031-06-01T07:30:00.000Z"
        again = client.get(f"{URL}/{post['id']}", headers=key.headers).json()["data"]
        assert again["scheduledAt"] == "2031-06-01T07:30:00.000Z"

    def test_test_mode_can_schedule_on_every_platform_that_takes_text(self, client, key):
        platforms = ["twitter", "linkedin", "facebook", "threads", "mastodon", "bluesky", "telegram", "discord"]
        response = client.post(URL, headers=key.headers, json={"content": "Everywhere", "platforms": platforms, "scheduledAt": future()})
        assert response.status_code == 201, response.text

    @pytest.mark.parametrize("platform", ["instagram", "tiktok", "youtube", "pinterest"])
    def test_a_platform_without_text_posts_takes_a_draft_but_no_schedule(self, client, session, key, platform):
        body = {"content": "Needs a picture", "platforms": ["twitter", platform]}
        error = assert_validation_error(
            client.post(URL, headers=key.headers, json={**body, "scheduledAt": future()}), "platforms"
        )
        assert platform in error["message"] and "text-only post" in error["message"] and "twitter" not in error["message"]
        assert post_count(session) == 0
        draft = client.post(URL, headers=key.headers, json=body)
        assert draft.status_code == 201
        published = client.post(f"{URL}/{draft.json()['data']['id']}/publish", headers=key.headers)
        assert_validation_error(published, "platforms")

    def test_live_mode_needs_an_active_account_to_schedule(self, client, session, live_key):
        body = {"content": "Live", "platforms": ["twitter", "bluesky"], "scheduledAt": future()}
        error = assert_validation_error(client.post(URL, headers=live_key.headers, json=body), "platforms")
        assert "twitter" in error["message"] and "bluesky" in error["message"]
        assert post_count(session) == 0
        draft = client.post(URL, headers=live_key.headers, json={"content": "Live", "platforms": ["twitter"]})
        assert draft.status_code == 201 and draft.json()["data"]["livemode"] is True

    def test_live_mode_schedules_with_active_accounts(self, client, session, live_key):
        for platform in ("twitter", "bluesky"):
            session.add(ConnectedAccount(workspace_id=live_key.model.workspace_id, livemode=True, platform=platform,
                                         connector="sandbox", handle=f"@{platform}", status="active"))
        session.add(ConnectedAccount(workspace_id=live_key.model.workspace_id, livemode=True, platform="threads",
                                     connector="sandbox", handle="@threads", status="needs_reauth"))
        session.commit()
        ok = client.post(URL, headers=live_key.headers, json={"content": "Live", "platforms": ["twitter", "bluesky"], "scheduledAt": future()})
        assert ok.status_code == 201, ok.text
        refused = client.post(URL, headers=live_key.headers, json={"content": "Live", "platforms": ["threads"], "scheduledAt": future()})
        assert_validation_error(refused, "platforms", "threads")

    def test_content_is_checked_against_the_strictest_platform(self, client, session, key):
        text = "x" * 300
        error = assert_validation_error(
            client.post(URL, headers=key.headers, json={"content": text, "platforms": ["linkedin", "twitter"]}), "content"
        )
        assert "twitter" in error["message"] and "280" in error["message"]
        assert post_count(session) == 0
        assert client.post(URL, headers=key.headers, json={"content": text, "platforms": ["linkedin"]}).status_code == 201
        exactly = client.post(URL, headers=key.headers, json={"content": "é" * 280, "platforms": ["twitter"]})
        assert exactly.status_code == 201

    def test_media_urls_are_refused(self, client, session, key):
        body = {"content": "Look", "platforms": ["twitter"], "mediaUrls": ["https://example.com/a.png"]}
        error = assert_validation_error(client.post(URL, headers=key.headers, json=body), "mediaUrls")
        assert "media is attached in the application" in error["message"]
        assert post_count(session) == 0

    @pytest.mark.parametrize(
        "body, field",
        [
            ({"platforms": ["twitter"]}, "content"),
            ({"content": "Hi"}, "platforms"),
            ({"content": "", "platforms": ["twitter"]}, "content"),
            ({"content": "   ", "platforms": ["twitter"]}, "content"),
            ({"content": "Hi", "platforms": []}, "platforms"),
            ({"content": "Hi", "platforms": ["myspace"]}, "platforms[0]"),
            ({"content": "Hi", "platforms": ["twitter", "twitter"]}, "platforms"),
            ({"content": 42, "platforms": ["twitter"]}, "content"),
            ({"content": "Hi", "platforms": ["twitter"], "scheduledAt": "tomorrow"}, "scheduledAt"),
            ({"content": "Hi", "platforms": ["twitter"], "scheduledAt": "2031-01-01T10:00:00"}, "scheduledAt"),
            ({"content": "Hi", "platforms": ["twitter"], "scheduledAt": "2001-01-01T10:00:00Z"}, "scheduledAt"),
            ({"content": "Hi", "platforms": ["twitter"], "status": "published"}, "status"),
            ({"content": "Hi", "platforms": ["twitter"], "contnet": "typo"}, "contnet"),
        ],
    )
    def test_invalid_body_is_422_and_stores_nothing(self, client, session, key, body, field):
        assert_validation_error(client.post(URL, headers=key.headers, json=body), field)
        assert post_count(session) == 0

    def test_body_must_be_an_object(self, client, session, key):
        assert_validation_error(client.post(URL, headers=key.headers, json=["content"]))
        assert post_count(session) == 0

    def test_sandbox_accounts_exist_for_test_mode_only(self, session, workspace):
        accounts = session.execute(select(ConnectedAccount).where(ConnectedAccount.workspace_id == workspace.id)).scalars().all()
        assert len(accounts) == 12
        assert all(account.livemode is False and account.connector == "sandbox" for account in accounts)
