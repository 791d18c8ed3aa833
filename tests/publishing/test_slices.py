"""A job works through a slice of claims: one call at a time (publish_concurrency 1)
each receipt is committed before the next call, and their posts are settled at the end
(test_concurrent_slices.py has several calls in flight). A
duplicate of the job does nothing; a slice that runs out of time gives the rest back;
a job that dies in the middle of a slice loses nothing and publishes nothing twice,
and the posts it published are settled by the dispatcher's sweep."""
import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from persistence.accounts import ConnectedAccount
from persistence.events import Event
from persistence.posts import Post, PostTarget
from socialpub import clock, sweeps
from socialpub.connectors.registry import connector_for as real_connector_for
from socialpub.publishing import dispatch, jobs, publications
from socialpub.publishing import service as publishing
from tests.support.publishing import deliveries

URL = "/api/v1/posts"


def schedule(client, key, count):
    when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)).isoformat()
    for number in range(count):
        response = client.post(
            URL, headers=key.headers, json={"content": f"Slice {number}", "platforms": ["twitter"], "scheduledAt": when}
        )
        assert response.status_code == 201, response.text


def claim_one_slice(database, at) -> tuple[str, list[str]]:
    with database.transaction() as session:
        targets, _ = dispatch.claim_due(session, now=at)
    assert len({token for _, token in targets}) == 1
    return targets[0][1], [str(target_id) for target_id, _ in targets]


def post_statuses(session) -> list[str]:
    session.expire_all()
    return sorted(session.execute(select(Post.status)).scalars())


def published_events(session) -> int:
    return session.execute(select(func.count()).select_from(Event).where(Event.type == "post.published")).scalar_one()


class Watching:
    """The sandbox, with something done before each call."""

    def __init__(self, before_call):
        self.before_call = before_call
        self.calls = []

    def __call__(self, name):
        inner = real_connector_for(name)
        watcher = self

        class Connector:
            def publish(self, credentials, content, *, idempotency_key):
                watcher.before_call(credentials, idempotency_key)
                watcher.calls.append(idempotency_key)
                return inner.publish(credentials, content, idempotency_key=idempotency_key)

        return Connector()


class WorkerKilled(BaseException):
    """What a job sees of SIGKILL: nothing after this point runs."""


def run_slice(pipeline, token, target_ids, connector_for, **settings):
    return publications.run_publish_slice(
        database=pipeline.database, settings=pipeline.runtime.settings.replace(**settings),
        connector_for=connector_for, token=token, target_ids=target_ids,
    )


class TestSlice:
    def test_publishes_each_target_once_and_settles_the_posts(self, client, session, key, pipeline):
        schedule(client, key, count=3)
        token, target_ids = claim_one_slice(pipeline.database, pipeline.later(hours=1))

        assert jobs.publish_targets(token, target_ids) == {target_id: "published" for target_id in target_ids}
        assert deliveries(session) == 3
        assert post_statuses(session) == ["published"] * 3
        assert published_events(session) == 3
        # A duplicate of the job finds no token.
        assert jobs.publish_targets(token, target_ids) == {target_id: "skipped" for target_id in target_ids}
        assert deliveries(session) == 3 and published_events(session) == 3

    def test_one_call_at_a_time_each_receipt_is_recorded_before_the_next_call(self, client, session, key, pipeline):
        schedule(client, key, count=3)
        token, target_ids = claim_one_slice(pipeline.database, pipeline.later(hours=1))

        def before_call(_credentials, idempotency_key):
            session.expire_all()
            targets = {str(t.id): t for t in session.execute(select(PostTarget)).scalars()}
            for earlier in watching.calls:
                assert targets[earlier].status == "published" and targets[earlier].external_id.startswith("sbx_")
            # Its own claim is taken just before its call, the later ones not yet.
            assert targets[idempotency_key].claim_token != token
            later = target_ids[target_ids.index(idempotency_key) + 1:]
            assert all(targets[target_id].claim_token == token for target_id in later)

        watching = Watching(before_call)
        run_slice(pipeline, token, target_ids, watching, publish_concurrency=1)
        assert watching.calls == target_ids

    def test_a_changed_account_is_read_again(self, client, session, key, pipeline):
        schedule(client, key, count=2)
        token, target_ids = claim_one_slice(pipeline.database, pipeline.later(hours=1))
        seen = []

        def before_call(credentials, _idempotency_key):
            seen.append(dict(credentials.options))
            if len(seen) == 1:
                account = session.execute(select(ConnectedAccount).where(ConnectedAccount.platform == "twitter",
                                                                         ConnectedAccount.livemode.is_(False))).scalar_one()
                account.options = {"latencyMs": 1}
                session.commit()

        # One call at a time: the second claim is taken after the change.
        run_slice(pipeline, token, target_ids, Watching(before_call), publish_concurrency=1)
        assert seen == [{}, {"latencyMs": 1}]

    @pytest.mark.parametrize("during", [0, 1], ids=["the target's call", "the next call"])
    def test_a_first_comment_set_while_the_target_is_published_is_posted_once(
        self, client, session, key, pipeline, during
    ):
        schedule(client, key, count=2)
        token, target_ids = claim_one_slice(pipeline.database, pipeline.later(hours=1))
        post_id = str(session.get(PostTarget, uuid.UUID(target_ids[0])).post_id)

        def before_call(_credentials, idempotency_key):
            # During the target's own call, or once its receipt is recorded but its post
            # not yet settled (the slice settles its posts at the end).
            if idempotency_key == target_ids[during]:
                response = client.put(f"{URL}/{post_id}/first-comment", headers=key.headers, json={"content": "Hi"})
                assert response.status_code == 200, response.text

        # One call at a time: "the next call" comes after the first receipt, and the
        # request made during a call has the test's one database connection to itself.
        run_slice(pipeline, token, target_ids, Watching(before_call), publish_concurrency=1)
        pipeline.run()
        assert deliveries(session, kind="comment") == 1
        comment = client.get(f"{URL}/{post_id}/first-comment", headers=key.headers).json()["data"]
        assert comment["status"] == "posted"

    def test_a_slice_out_of_time_gives_the_rest_back(self, client, session, key, pipeline):
        schedule(client, key, count=3)
        at = pipeline.later(hours=1)
        token, target_ids = claim_one_slice(pipeline.database, at)

        # The slice takes claims for a quarter of its 2-second lease; a call takes longer
        # (on a fake clock, which the call moves on).
        with clock.installed(clock.FakeClock()):
            outcomes = run_slice(
                pipeline, token, target_ids, Watching(lambda *_: clock.sleep(0.6)), publish_lease_seconds=2,
                publish_concurrency=1,
            )
        assert list(outcomes.values()) == ["published", "given back", "given back"]
        session.expire_all()
        for target_id in target_ids[1:]:
            given_back = session.get(PostTarget, uuid.UUID(target_id))
            assert (given_back.status, given_back.claim_token, given_back.lease_until) == ("pending", None, None)
            assert given_back.attempts == 0
        # Due as before: the next dispatch hands them out again.
        assert pipeline.run(at=at) == 2
        assert deliveries(session) == 3 and post_statuses(session) == ["published"] * 3


def claim_and_kill_at_third_call(pipeline, at) -> list[str]:
    """Claims one slice and runs it, one call at a time, until the worker dies before
    its third platform call."""
    token, target_ids = claim_one_slice(pipeline.database, at)

    def before_call(_credentials, idempotency_key):
        if idempotency_key == target_ids[2]:
            raise WorkerKilled()

    with pytest.raises(WorkerKilled):
        run_slice(pipeline, token, target_ids, Watching(before_call), publish_concurrency=1)
    return target_ids


class TestJobKilledMidSlice:
    def test_loses_nothing_publishes_nothing_twice_and_its_posts_are_settled(
        self, client, session, key, pipeline, monkeypatch
    ):
        schedule(client, key, count=4)
        at = pipeline.later(hours=1)
        target_ids = claim_and_kill_at_third_call(pipeline, at)
        assert deliveries(session) == 2
        # Published, but their posts were to be settled at the end of the slice.
        assert post_statuses(session) == ["scheduled"] * 4
        session.expire_all()
        statuses = [session.get(PostTarget, uuid.UUID(target_id)).status for target_id in target_ids]
        assert statuses == ["published", "published", "publishing", "publishing"]

        # The dispatcher sweeps (whenever it last did in this process) and, once the
        # leases have run out, hands the rest out again.
        monkeypatch.setattr(dispatch, "_sweep_interval", sweeps.Interval())
        pipeline.run(at=at + dt.timedelta(seconds=pipeline.runtime.settings.publish_lease_seconds + 1))
        assert deliveries(session) == 4
        assert post_statuses(session) == ["published"] * 4
        assert published_events(session) == 4

    def test_the_sweep_settles_what_it_left(self, client, session, key, pipeline):
        schedule(client, key, count=3)
        at = pipeline.later(hours=1)
        target_ids = claim_and_kill_at_third_call(pipeline, at)
        with pipeline.database.transaction() as sweep:
            assert publishing.settle_unsettled_posts(sweep, now=at) == 2
        assert post_statuses(session) == ["published", "published", "scheduled"]
        with pipeline.database.transaction() as sweep:
            # Nothing more: the third post's target is still being published.
            assert publishing.settle_unsettled_posts(sweep, now=at) == 0
        assert published_events(session) == 2

    def test_the_sweep_reads_the_due_posts_a_page_at_a_time(self, client, session, key, pipeline):
        schedule(client, key, count=3)
        at = pipeline.later(hours=1)
        claim_and_kill_at_third_call(pipeline, at)
        position = sweeps.Position()
        settled = []
        for _ in range(4):  # a post each, in order; the fourth reads none and starts again
            with pipeline.database.transaction() as sweep:
                settled.append(publishing.settle_unsettled_posts(sweep, now=at, limit=1, position=position))
        assert sorted(settled) == [0, 0, 1, 1] and position.after is None
        assert sorted(post_statuses(session)) == ["published", "published", "scheduled"]



def schedule_on(client, key, platforms) -> list[str]:
    """One post per platform, in order; returns their ids."""
    when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)).isoformat()
    ids = []
    for platform in platforms:
        response = client.post(
            URL, headers=key.headers, json={"content": f"On {platform}", "platforms": [platform], "scheduledAt": when}
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["data"]["id"])
    return ids


def sandbox_account_on(session, platform) -> ConnectedAccount:
    return session.execute(
        select(ConnectedAccount).where(ConnectedAccount.platform == platform, ConnectedAccount.livemode.is_(False))
    ).scalar_one()


def in_post_order(session, target_ids, post_ids) -> list[str]:
    """The slice's targets, in the order of the posts they belong to."""
    post_of = {target_id: str(session.get(PostTarget, uuid.UUID(target_id)).post_id) for target_id in target_ids}
    return sorted(target_ids, key=lambda target_id: post_ids.index(post_of[target_id]))


def written_with_another_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet(Fernet.generate_key()).encrypt(b'{"access_token": "t"}').decode()


class TestTargetThatCannotBeCalled:
    @pytest.mark.parametrize(
        "breakage, code, says",
        [
            ({"secrets_encrypted": written_with_another_key()}, "account_credentials_unreadable", "cannot be decrypted"),
            ({"connector": "myspace"}, "connector_unavailable", "no connector named 'myspace'"),
        ],
        ids=["unreadable credentials", "unknown connector"],
    )
    def test_fails_for_good_and_the_slice_carries_on(self, client, session, key, pipeline, breakage, code, says):
        post_ids = schedule_on(client, key, ["twitter", "bluesky", "twitter"])
        broken = sandbox_account_on(session, "bluesky")
        for name, value in breakage.items():
            setattr(broken, name, value)
        session.commit()
        token, target_ids = claim_one_slice(pipeline.database, pipeline.later(hours=1))
        first, unusable, last = in_post_order(session, target_ids, post_ids)

        watching = Watching(lambda *_: None)
        outcomes = run_slice(pipeline, token, [first, unusable, last], watching)
        assert outcomes == {first: "published", unusable: "failed", last: "published"}
        assert watching.calls == [first, last]
        session.expire_all()
        target = session.get(PostTarget, uuid.UUID(unusable))
        assert (target.status, target.error_code, target.claim_token) == ("failed", code, None)
        assert says in target.error_message and broken.handle in target.error_message
        # Shown on the post, which failed; the others went out once.
        shown = client.get(f"{URL}/{post_ids[1]}", headers=key.headers).json()["data"]
        assert shown["status"] == "failed" and shown["targets"][0]["error"]["code"] == code
        assert deliveries(session) == 2 and post_statuses(session) == ["failed", "published", "published"]
        # Failed for good: the dispatcher has nothing more to hand out.
        assert pipeline.run(at=pipeline.later(hours=2)) == 0


class TestReceiptAndNextClaim:
    def test_a_recorded_receipt_survives_a_failure_taking_the_next_claim(self, client, session, key, pipeline, monkeypatch):
        post_ids = schedule_on(client, key, ["twitter", "mastodon"])
        at = pipeline.later(hours=1)
        token, target_ids = claim_one_slice(pipeline.database, at)
        first, second = in_post_order(session, target_ids, post_ids)
        take = publications._take_publication

        def database_gone_at_the_second(session_, target_ids, *args):
            if second in {str(target_id) for target_id in target_ids}:
                raise RuntimeError("the database connection was lost")
            return take(session_, target_ids, *args)

        monkeypatch.setattr(publications, "_take_publication", database_gone_at_the_second)
        with pytest.raises(RuntimeError):
            # One call at a time: the second is taken in the transaction that records the first.
            run_slice(pipeline, token, [first, second], Watching(lambda *_: None), publish_concurrency=1)
        session.expire_all()
        recorded = session.get(PostTarget, uuid.UUID(first))
        assert recorded.status == "published" and recorded.external_id.startswith("sbx_")
        # The second keeps its claim until its lease runs out, then goes out once.
        monkeypatch.undo()
        monkeypatch.setattr(dispatch, "_sweep_interval", sweeps.Interval())
        pipeline.run(at=at + dt.timedelta(seconds=pipeline.runtime.settings.publish_lease_seconds + 1))
        assert deliveries(session) == 2
        assert post_statuses(session) == ["published", "published"]
        assert session.get(PostTarget, uuid.UUID(first)).attempts == 1
