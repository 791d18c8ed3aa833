"""No claim stays in flight for ever. A slice goes on past a target whose outcome
cannot be recorded, and the target is handed out again when its lease runs out; a
target or first comment whose every run stops before recording anything (its worker
killed mid-call, say) fails with `publish_interrupted` after publish_max_attempts,
and its post settles."""
import datetime as dt
import uuid

import pytest

from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub.publishing import dispatch, jobs, publications
from socialpub.publishing.service import settle_unsettled_posts
from tests.support.factories import make_post
from tests.support.publishing import deliveries
from tests.support.settings import test_settings

MAX_ATTEMPTS = 2
LEASE_SECONDS = 60
URL = "/api/v1/posts"


@pytest.fixture
def settings(database_url, test_redis_url):
    return test_settings(
        database_url, test_redis_url, publish_max_attempts=MAX_ATTEMPTS, publish_lease_seconds=LEASE_SECONDS
    )


class WorkerKilled(BaseException):
    """What a job sees of its process being killed: nothing after this point runs."""


def at(minutes: float) -> dt.datetime:
    """`minutes` from now: the posts here are published now, and a job's lease runs
    from the moment it takes its claim."""
    return utcnow() + dt.timedelta(minutes=minutes)


def claim(db, when: dt.datetime) -> tuple[list, list]:
    with db.transaction() as session:
        return dispatch.claim_due(session, now=when, lease_seconds=LEASE_SECONDS, max_attempts=MAX_ATTEMPTS)


def run(job, claimed: list) -> dict:
    """Runs the slice job on claims sharing one token, as the queue would."""
    [token] = {token for _, token in claimed}
    return job(token, [str(target_id) for target_id, _ in claimed])


def post_state(client, key, post_id) -> dict:
    return client.get(f"{URL}/{post_id}", headers=key.headers).json()["data"]


def kill_every_call(monkeypatch, kind: str) -> list:
    """Makes every platform call of `kind` ("publish" or "comment") kill its job."""
    calls = []
    real_connector_for = jobs.connector_for

    def connector_for(name):
        connector = real_connector_for(name)

        class Killing:
            def __getattr__(self, attribute):
                return getattr(connector, attribute)

            def _killed(self, *args, **kwargs):
                calls.append(kwargs.get("idempotency_key"))
                raise WorkerKilled()

        killing = Killing()
        setattr(killing, kind, killing._killed)
        return killing

    monkeypatch.setattr(jobs, "connector_for", connector_for)
    return calls


def test_a_slice_goes_on_past_an_unrecordable_outcome_and_the_target_is_sent_again(
    client, session, db, workspace, key, monkeypatch
):
    post = make_post(session, workspace, platforms=["twitter", "mastodon"])
    assert client.post(f"{URL}/{post.id}/publish", headers=key.headers).status_code == 202
    real_record = publications._record_publication
    unrecordable = []

    def record(session_, taken, receipt, error, settings_):
        if not unrecordable:
            unrecordable.append(taken.target_id)
            raise RuntimeError("the receipt could not be written")
        return real_record(session_, taken, receipt, error, settings_)

    monkeypatch.setattr(publications, "_record_publication", record)
    targets, _ = claim(db, at(0))
    outcomes = run(jobs.publish_targets, targets)
    [poisoned] = unrecordable
    assert outcomes == {str(target_id): "unrecorded" if target_id == poisoned else "published" for target_id, _ in targets}
    # Its claim stays with the run that could not record it until the lease runs out.
    assert claim(db, at(0.5)) == ([], [])
    monkeypatch.undo()
    again, _ = claim(db, at(LEASE_SECONDS / 60 + 1))
    assert [target_id for target_id, _ in again] == [poisoned]
    assert run(jobs.publish_targets, again) == {str(poisoned): "published"}
    state = post_state(client, key, post.id)
    assert state["status"] == "published"
    assert {target["status"] for target in state["targets"]} == {"published"}
    # The platform was asked twice under one idempotency key, and published once.
    assert deliveries(session) == 2


@pytest.mark.parametrize("kind", ["publish", "comment"])
def test_a_claim_whose_every_run_is_killed_fails_as_interrupted(client, session, db, workspace, key, monkeypatch, kind):
    post = make_post(session, workspace, platforms=["mastodon"])
    if kind == "comment":
        client.put(f"{URL}/{post.id}/first-comment", headers=key.headers, json={"content": "More below"})
    assert client.post(f"{URL}/{post.id}/publish", headers=key.headers).status_code == 202
    if kind == "comment":
        targets, comments = claim(db, at(0))
        assert run(jobs.publish_targets, targets)
        assert comments == []
    calls = kill_every_call(monkeypatch, kind)
    job = jobs.publish_targets if kind == "publish" else jobs.post_first_comments
    lease_minutes = LEASE_SECONDS / 60 + 1
    for attempt in range(MAX_ATTEMPTS):
        targets, comments = claim(db, at(attempt * lease_minutes))
        claimed = targets if kind == "publish" else comments
        assert len(claimed) == 1, f"attempt {attempt + 1} claims the target again"
        with pytest.raises(WorkerKilled):
            run(job, claimed)
    assert len(calls) == MAX_ATTEMPTS
    # The last run's lease runs out: the claim is failed instead of handed out again.
    assert claim(db, at(MAX_ATTEMPTS * lease_minutes)) == ([], [])
    session.expire_all()
    [target] = session.query(PostTarget).filter(PostTarget.post_id == uuid.UUID(str(post.id))).all()
    prefix = "" if kind == "publish" else "comment_"
    assert getattr(target, prefix + "status") == "failed"
    assert getattr(target, prefix + "error_code") == "publish_interrupted"
    assert getattr(target, prefix + "claim_token") is None and getattr(target, prefix + "lease_until") is None
    assert f"each of its {MAX_ATTEMPTS} attempts" in getattr(target, prefix + "error_message")
    with db.transaction() as sweep:
        settle_unsettled_posts(sweep, now=at(MAX_ATTEMPTS * lease_minutes))
    state = post_state(client, key, post.id)
    if kind == "publish":
        assert state["status"] == "failed"
        assert state["targets"][0]["error"]["code"] == "publish_interrupted"
    else:
        assert state["status"] == "published"
        assert state["targets"][0]["comment"]["status"] == "failed"
        assert state["targets"][0]["comment"]["error"]["code"] == "publish_interrupted"
    # Never again: nothing is due.
    assert claim(db, at(10 * lease_minutes)) == ([], [])
