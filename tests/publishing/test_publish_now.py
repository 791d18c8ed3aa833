"""POST /posts/{postId}/publish: 202, the post stays scheduled until its targets
finish; publishing again retries only failed targets; 409 where it does not fit."""
import datetime as dt

from sqlalchemy import select

from persistence.sandbox import SandboxCall
from tests.support.factories import make_post
from tests.support.publishing import deliveries
from tests.support.posts import assert_validation_error

URL = "/api/v1/posts"


def publish(client, key, post_id):
    return client.post(f"{URL}/{post_id}/publish", headers=key.headers)


def fetch(client, key, post_id):
    return client.get(f"{URL}/{post_id}", headers=key.headers).json()["data"]


class TestPublishNow:
    def test_draft_is_published_now(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace, platforms=["twitter", "linkedin"])
        response = publish(client, key, post.id)
        assert response.status_code == 202
        assert response.headers["location"] == f"/api/v1/posts/{post.id}"
        accepted = response.json()["data"]
        assert accepted["status"] == "scheduled"
        assert {t["status"] for t in accepted["targets"]} == {"pending"}
        scheduled_at = dt.datetime.fromisoformat(accepted["scheduledAt"].replace("Z", "+00:00"))
        assert abs((scheduled_at - dt.datetime.now(dt.timezone.utc)).total_seconds()) < 60
        pipeline.run()
        done = fetch(client, key, post.id)
        assert done["status"] == "published" and {t["status"] for t in done["targets"]} == {"published"}
        assert deliveries(session) == 2

    def test_scheduled_post_goes_out_now_instead_of_later(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace, status="scheduled")
        client.patch(f"{URL}/{post.id}", headers=key.headers, json={"scheduledAt": (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=3)).isoformat()})
        assert publish(client, key, post.id).status_code == 202
        pipeline.run()
        assert fetch(client, key, post.id)["status"] == "published"

    def test_publishing_a_published_post_is_409(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace)
        publish(client, key, post.id)
        pipeline.run()
        again = publish(client, key, post.id)
        assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
        assert deliveries(session) == 1

    def test_publishing_again_retries_only_failed_targets(self, client, session, workspace, key, pipeline, sandbox_account):
        broken = sandbox_account(platform="twitter", failPermanent=True)
        post = make_post(session, workspace, platforms=["twitter", "mastodon"])
        publish(client, key, post.id)
        pipeline.run()
        failed = fetch(client, key, post.id)
        assert failed["status"] == "failed"
        published_ids = {t["id"]: t["externalId"] for t in failed["targets"] if t["status"] == "published"}
        assert len(published_ids) == 2
        broken.options = {}
        session.commit()
        assert publish(client, key, post.id).status_code == 202
        pipeline.run()
        done = fetch(client, key, post.id)
        assert done["status"] == "published"
        for target in done["targets"]:
            if target["id"] in published_ids:
                assert target["externalId"] == published_ids[target["id"]] and target["attempts"] == 1
        calls = session.execute(select(SandboxCall.idempotency_key, SandboxCall.outcome)).all()
        accepted_keys = [k for k, outcome in calls if outcome == "accepted"]
        assert len(accepted_keys) == len(set(accepted_keys)) == 3

    def test_editing_while_publishing_is_409(self, client, session, workspace, key, pipeline):
        from socialpub.publishing import dispatch

        post = make_post(session, workspace)
        publish(client, key, post.id)
        with pipeline.database.transaction() as claim_session:
            dispatch.claim_due(claim_session)
        response = client.patch(f"{URL}/{post.id}", headers=key.headers, json={"content": "Too late"})
        assert response.status_code == 409
        assert publish(client, key, post.id).status_code == 409

    def test_live_post_without_accounts_is_422(self, client, session, workspace, live_key):
        post = make_post(session, workspace, livemode=True, platforms=["bluesky"])
        assert_validation_error(publish(client, live_key, post.id), "platforms", "bluesky")
        session.refresh(post)
        assert post.status == "draft"

    def test_content_too_long_is_422(self, client, session, workspace, key):
        post = make_post(session, workspace, content="z" * 400, platforms=["twitter"])
        assert_validation_error(publish(client, key, post.id), "content", "twitter")
