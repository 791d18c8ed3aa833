"""How a post moves between states through the API once the pipeline has had it: a
failed post can become a draft again or be rescheduled; published and failed posts
can be deleted; a post that went out anywhere cannot be edited (409)."""
import datetime as dt

import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from tests.support.publishing import deliveries

URL = "/api/v1/posts"


def in_hours(hours: float) -> str:
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=hours)).isoformat()


def fetch(client, key, post_id):
    response = client.get(f"{URL}/{post_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def patch(client, key, post_id, **body):
    return client.patch(f"{URL}/{post_id}", headers=key.headers, json=body)


def sandbox(session, platform: str) -> ConnectedAccount:
    return session.execute(
        select(ConnectedAccount).where(ConnectedAccount.platform == platform, ConnectedAccount.livemode.is_(False))
    ).scalar_one()


def set_options(session, platform: str, **options) -> None:
    sandbox(session, platform).options = options
    session.commit()


@pytest.fixture
def gone_out(client, key, pipeline, session):
    """Schedules a post on these platforms, each refusing it or not, and runs the
    pipeline past its time; returns the post as the API shows it then."""

    def make(**refusing):
        for platform, refuses in refusing.items():
            set_options(session, platform, **({"failPermanent": True} if refuses else {}))
        response = client.post(URL, headers=key.headers, json={
            "content": "Going out", "platforms": list(refusing), "scheduledAt": in_hours(1),
        })
        assert response.status_code == 201, response.text
        pipeline.run(at=pipeline.later(hours=2))
        return fetch(client, key, response.json()["data"]["id"])

    return make


def assert_conflict(response):
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "conflict"


class TestFailedPost:
    def test_null_schedule_makes_it_a_draft_without_targets(self, client, key, gone_out, pipeline, session):
        failed = gone_out(twitter=True)
        assert failed["status"] == "failed"

        draft = patch(client, key, failed["id"], scheduledAt=None)
        assert draft.status_code == 200, draft.text
        shown = draft.json()["data"]
        assert (shown["status"], shown["scheduledAt"], shown["targets"]) == ("draft", None, [])
        assert fetch(client, key, failed["id"]) == shown
        set_options(session, "twitter")
        pipeline.run(at=pipeline.later(hours=3))
        assert fetch(client, key, failed["id"])["status"] == "draft" and deliveries(session) == 0

    def test_a_new_schedule_retries_it_then(self, client, key, gone_out, pipeline, session):
        failed = gone_out(twitter=True)
        set_options(session, "twitter")

        response = patch(client, key, failed["id"], scheduledAt=in_hours(4))
        assert response.status_code == 200, response.text
        scheduled = response.json()["data"]
        assert scheduled["status"] == "scheduled"
        [target] = scheduled["targets"]
        assert target["id"] == failed["targets"][0]["id"]
        assert (target["status"], target["error"], target["attempts"]) == ("pending", None, 0)
        assert target["nextAttemptAt"] == scheduled["scheduledAt"]

        pipeline.run(at=pipeline.later(hours=3))
        assert fetch(client, key, failed["id"])["status"] == "scheduled" and deliveries(session) == 0
        pipeline.run(at=pipeline.later(hours=5))
        published = fetch(client, key, failed["id"])
        assert published["status"] == "published" and deliveries(session) == 1

    def test_its_content_can_change_while_nothing_went_out(self, client, key, gone_out):
        failed = gone_out(twitter=True)
        changed = patch(client, key, failed["id"], content="Better this time")
        assert changed.status_code == 200, changed.text
        assert changed.json()["data"]["content"] == "Better this time"
        assert changed.json()["data"]["status"] == "failed"

    @pytest.mark.parametrize("body", [
        {"content": "Changed"},
        {"scheduledAt": None},
        {"scheduledAt": "in 4 hours"},
        {"platforms": ["twitter"]},
    ], ids=["content", "null schedule", "new schedule", "platforms"])
    def test_with_a_published_target_it_cannot_be_edited(self, client, key, gone_out, session, body):
        failed = gone_out(twitter=True, mastodon=False)
        assert failed["status"] == "failed"
        assert {t["platform"]: t["status"] for t in failed["targets"]} == {"twitter": "failed", "mastodon": "published"}
        if body.get("scheduledAt") == "in 4 hours":
            body = {"scheduledAt": in_hours(4)}

        response = patch(client, key, failed["id"], **body)
        assert_conflict(response)
        assert "mastodon" in response.json()["error"]["message"]
        assert "publish it again" in response.json()["error"]["message"]
        assert fetch(client, key, failed["id"]) == failed
        # Publishing it again is the way to retry where it failed.
        set_options(session, "twitter")
        assert client.post(f"{URL}/{failed['id']}/publish", headers=key.headers).status_code == 202


class TestPublishedPost:
    @pytest.mark.parametrize("body", [{"scheduledAt": None}, {"content": "Changed"}], ids=["null schedule", "content"])
    def test_cannot_be_edited(self, client, key, gone_out, body):
        published = gone_out(twitter=False)
        assert published["status"] == "published"
        assert_conflict(patch(client, key, published["id"], **body))
        assert fetch(client, key, published["id"]) == published


class TestDelete:
    @pytest.mark.parametrize("refuses", [False, True], ids=["published", "failed"])
    def test_removes_the_post_and_leaves_the_platform_alone(self, client, key, gone_out, session, refuses):
        post = gone_out(twitter=refuses)
        assert post["status"] == ("failed" if refuses else "published")
        delivered = deliveries(session)

        response = client.delete(f"{URL}/{post['id']}", headers=key.headers)
        assert response.status_code == 200, response.text
        assert response.json()["data"]["id"] == post["id"]
        gone = client.get(f"{URL}/{post['id']}", headers=key.headers)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "resource_not_found"
        assert deliveries(session) == delivered
        assert client.delete(f"{URL}/{post['id']}", headers=key.headers).status_code == 404
