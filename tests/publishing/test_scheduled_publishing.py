"""A scheduled post goes out at its time, to every account on its platforms, once."""
import datetime as dt
import functools

import pytest
from sqlalchemy import select

from persistence.sandbox import SandboxCall
from persistence.events import Event
from tests.support.settings import test_settings
from tests.support.publishing import deliveries

URL = "/api/v1/posts"


def schedule(client, key, *, platforms=("twitter", "mastodon"), when=None, content="Going out"):
    when = when or (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1))
    response = client.post(URL, headers=key.headers, json={"content": content, "platforms": list(platforms), "scheduledAt": when.isoformat()})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def fetch(client, key, post_id):
    return client.get(f"{URL}/{post_id}", headers=key.headers).json()["data"]


class TestScheduledPublishing:
    def test_scheduling_creates_one_pending_target_per_account(self, client, key):
        post = schedule(client, key)
        assert [(t["platform"], t["status"]) for t in post["targets"]] == [("mastodon", "pending"), ("twitter", "pending")]
        assert all(t["nextAttemptAt"] == post["scheduledAt"] for t in post["targets"])

    def test_nothing_goes_out_before_its_time(self, client, session, key, pipeline):
        post = schedule(client, key)
        assert pipeline.run() == 0
        assert fetch(client, key, post["id"])["status"] == "scheduled"
        assert deliveries(session) == 0

    def test_goes_out_at_its_time_exactly_once(self, client, session, key, pipeline):
        post = schedule(client, key)
        pipeline.run(at=pipeline.later(hours=2))
        published = fetch(client, key, post["id"])
        assert published["status"] == "published"
        assert published["publishedAt"] is not None
        for target in published["targets"]:
            assert target["status"] == "published" and target["externalId"].startswith("sbx_")
            assert target["url"].startswith("https://sandbox.socialpub.dev/") and target["attempts"] == 1
        assert deliveries(session) == 2
        # Running the dispatcher again sends nothing more.
        assert pipeline.run(at=pipeline.later(hours=3)) == 0
        assert deliveries(session) == 2

    def test_offsets_are_stored_in_utc_and_honoured(self, client, key, pipeline):
        local = dt.datetime.now(dt.timezone(dt.timedelta(hours=5, minutes=30))) + dt.timedelta(minutes=30)
        post = schedule(client, key, when=local)
        assert post["scheduledAt"].endswith("Z")
        pipeline.run(at=pipeline.later(minutes=29))
        assert fetch(client, key, post["id"])["status"] == "scheduled"
        pipeline.run(at=pipeline.later(minutes=31))
        assert fetch(client, key, post["id"])["status"] == "published"

    def test_events_are_written_for_each_change(self, client, session, key, pipeline):
        post = schedule(client, key, platforms=("bluesky",))
        pipeline.run(at=pipeline.later(hours=2))
        types = session.execute(select(Event.type).order_by(Event.created_at)).scalars().all()
        assert types == ["post.scheduled", "post.published"]
        event = session.execute(select(Event).where(Event.type == "post.published")).scalar_one()
        assert event.data["post"]["id"] == post["id"] and event.livemode is False

    def test_unscheduling_removes_pending_targets(self, client, key, pipeline, session):
        post = schedule(client, key)
        draft = client.patch(f"{URL}/{post['id']}", headers=key.headers, json={"scheduledAt": None}).json()["data"]
        assert draft["status"] == "draft" and draft["targets"] == []
        pipeline.run(at=pipeline.later(hours=2))
        assert deliveries(session) == 0

    def test_rescheduling_moves_the_targets(self, client, key, pipeline):
        post = schedule(client, key)
        later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=5)
        moved = client.patch(f"{URL}/{post['id']}", headers=key.headers, json={"scheduledAt": later.isoformat()}).json()["data"]
        assert all(t["nextAttemptAt"] == moved["scheduledAt"] for t in moved["targets"])
        pipeline.run(at=pipeline.later(hours=2))
        assert fetch(client, key, post["id"])["status"] == "scheduled"

    def test_deleting_cancels_what_is_queued(self, client, session, key, pipeline):
        post = schedule(client, key)
        assert client.delete(f"{URL}/{post['id']}", headers=key.headers).status_code == 200
        pipeline.run(at=pipeline.later(hours=2))
        assert deliveries(session) == 0

    def test_a_published_post_cannot_be_edited(self, client, key, pipeline):
        post = schedule(client, key)
        pipeline.run(at=pipeline.later(hours=2))
        response = client.patch(f"{URL}/{post['id']}", headers=key.headers, json={"content": "Changed"})
        assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"


class TestFailures:
    @pytest.fixture
    def settings(self, database_url, test_redis_url):
        # A backoff longer than a worker takes to start, so "not retried before its
        # backoff is over" holds however slowly the jobs of the first run ran.
        return test_settings(database_url, test_redis_url, retry_base_seconds=60.0)

    def test_transient_failure_recovers_with_backoff(self, client, session, key, pipeline, sandbox_account):
        sandbox_account(platform="threads", failTransient=2)
        post = schedule(client, key, platforms=("threads",))
        pipeline.run(at=pipeline.later(hours=2), rounds=1)
        state = fetch(client, key, post["id"])
        assert state["status"] == "scheduled"
        assert sorted(t["status"] for t in state["targets"]) == ["pending", "published"]
        retrying = next(t for t in state["targets"] if t["status"] == "pending")
        assert retrying["attempts"] == 1 and retrying["error"]["code"] == "platform_unavailable"
        assert retrying["nextAttemptAt"] is not None
        # Not retried before its backoff is over...
        assert pipeline.run(rounds=1) == 0
        # ...and retried until it goes through.
        pipeline.run(at=pipeline.later(hours=3))
        done = fetch(client, key, post["id"])
        assert done["status"] == "published"
        recovered = next(t for t in done["targets"] if t["id"] == retrying["id"])
        assert recovered["attempts"] == 3 and recovered["error"] is None
        assert deliveries(session) == 2

    def test_backoff_grows_exponentially_and_honours_retry_after(self, settings):
        from socialpub.backoff import delay_seconds

        slow = settings.replace(retry_base_seconds=10.0, retry_max_seconds=3600.0)
        # The backoff as a publishing retry asks for it (runner.record_failure).
        backoff_seconds = functools.partial(
            delay_seconds, base=slow.retry_base_seconds, maximum=slow.retry_max_seconds, jitter_before_cap=True
        )
        assert 8 <= backoff_seconds(1) <= 12
        assert 32 <= backoff_seconds(3) <= 48
        assert backoff_seconds(30) == 3600.0
        assert backoff_seconds(1, retry_after=120) == 120

    def test_transient_failure_gives_up_after_the_configured_attempts(self, client, key, pipeline, sandbox_account):
        sandbox_account(platform="threads", failTransient=10)
        post = schedule(client, key, platforms=("threads",))
        for hours in (2, 3, 4, 5):
            pipeline.run(at=pipeline.later(hours=hours))
        state = fetch(client, key, post["id"])
        assert state["status"] == "failed"
        failed = [t for t in state["targets"] if t["status"] == "failed"]
        assert len(failed) == 1 and failed[0]["attempts"] == 3

    def test_permanent_failure_fails_at_once_and_keeps_what_went_out(self, client, session, key, pipeline, sandbox_account):
        sandbox_account(platform="twitter", failPermanent=True)
        post = schedule(client, key, platforms=("twitter", "linkedin"))
        pipeline.run(at=pipeline.later(hours=2))
        state = fetch(client, key, post["id"])
        assert state["status"] == "failed"
        by_status = {}
        for target in state["targets"]:
            by_status.setdefault(target["status"], []).append(target)
        assert len(by_status["published"]) == 2 and len(by_status["failed"]) == 1
        failed = by_status["failed"][0]
        assert failed["attempts"] == 1 and failed["error"]["code"] == "platform_rejected"
        assert deliveries(session) == 2
        types = session.execute(select(Event.type).order_by(Event.created_at)).scalars().all()
        assert types[-1] == "post.failed"

    def test_auth_failure_marks_the_account_for_reconnection(self, client, key, pipeline, sandbox_account):
        account = sandbox_account(platform="bluesky", authFailed=True)
        schedule(client, key, platforms=("bluesky",))
        pipeline.run(at=pipeline.later(hours=2))
        shown = client.get(f"/api/v1/accounts/{account.id}", headers=key.headers).json()["data"]
        assert shown["status"] == "needs_reauth" and "token" in shown["statusReason"]

    def test_a_duplicate_job_does_nothing(self, client, session, key, pipeline):
        from socialpub.publishing import dispatch, jobs

        schedule(client, key, platforms=("twitter",))
        with pipeline.database.transaction() as claim_session:
            [(target_id, token)], _ = dispatch.claim_due(claim_session, now=pipeline.later(hours=2))
        assert jobs.publish_target(str(target_id), token) == "published"
        assert jobs.publish_target(str(target_id), token) == "skipped"
        assert deliveries(session) == 1
        calls = session.execute(select(SandboxCall)).scalars().all()
        assert len(calls) == 1

    def test_an_expired_lease_is_claimed_again_and_sent_once(self, client, session, key, pipeline):
        from socialpub.publishing import dispatch, jobs

        schedule(client, key, platforms=("twitter",))
        with pipeline.database.transaction() as claim_session:
            [(target_id, first_token)], _ = dispatch.claim_due(claim_session, now=pipeline.later(hours=2), lease_seconds=60)
        # The worker that held this claim died before running the job.
        with pipeline.database.transaction() as claim_session:
            assert dispatch.claim_due(claim_session, now=pipeline.later(hours=2), lease_seconds=60) == ([], [])
            [(again, second_token)], _ = dispatch.claim_due(claim_session, now=pipeline.later(hours=2, minutes=2))
        assert again == target_id and second_token != first_token
        assert jobs.publish_target(str(target_id), first_token) == "skipped"
        assert jobs.publish_target(str(target_id), second_token) == "published"
        assert deliveries(session) == 1
