"""A slice keeps several platform calls in flight: platforms take hundreds of
milliseconds to answer, and a slice of N targets takes about its slowest call per
publish_concurrency targets, not the sum of its calls. Never more than
publish_concurrency_per_account calls go through one account, nor
publish_concurrency_per_platform to one platform; each receipt is committed as its
call returns, while slower calls are still in flight; a slice out of time still gives
back the claims it has not taken; and a job killed with calls in flight has each of
their targets called once more at most, under the same idempotency key."""
import dataclasses
import datetime as dt
import threading
import time
import uuid

import pytest
from sqlalchemy import func, select

from persistence.accounts import ConnectedAccount
from persistence.sandbox import SandboxCall
from persistence.posts import PostTarget
from socialpub import clock, sweeps
from socialpub.connectors.registry import connector_for as real_connector_for
from socialpub.publishing import dispatch, publications
from tests.support.publishing import deliveries

URL = "/api/v1/posts"


@dataclasses.dataclass(frozen=True)
class Call:
    idempotency_key: str
    account_id: str
    platform: str
    started: float
    ended: float


class Timing:
    """The sandbox, each call's account and its start and end noted; `around_call`
    runs in the call (on the slice's pool) before the sandbox is called."""

    def __init__(self, around_call=None):
        self.around_call = around_call
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def __call__(self, name):
        inner = real_connector_for(name)
        timing = self

        class Connector:
            def publish(self, credentials, content, *, idempotency_key):
                started = time.monotonic()
                try:
                    if timing.around_call is not None:
                        timing.around_call(credentials, idempotency_key)
                    return inner.publish(credentials, content, idempotency_key=idempotency_key)
                finally:
                    with timing._lock:
                        timing.calls.append(Call(
                            idempotency_key, str(credentials.account_id), credentials.platform, started, time.monotonic()
                        ))

        return Connector()

    def most_in_flight(self, which=lambda call: True) -> int:
        """The most calls (of those `which` picks) that were in flight at one moment."""
        moments = sorted(
            [(call.started, 1) for call in self.calls if which(call)] + [(call.ended, -1) for call in self.calls if which(call)],
            key=lambda moment: (moment[0], moment[1]),  # an end before a start at the same instant
        )
        in_flight = most = 0
        for _, change in moments:
            in_flight += change
            most = max(most, in_flight)
        return most


def own_sandbox_account(session, platform) -> ConnectedAccount:
    """The workspace's own test-mode sandbox account on the platform."""
    return session.execute(
        select(ConnectedAccount).where(ConnectedAccount.platform == platform, ConnectedAccount.livemode.is_(False))
        .order_by(ConnectedAccount.created_at).limit(1)
    ).scalar_one()


def with_accounts(session, sandbox_account, platform, count, **options) -> list[ConnectedAccount]:
    """`count` sandbox accounts on the platform (the workspace's own first), each with options."""
    own = own_sandbox_account(session, platform)
    own.options = dict(options)
    session.commit()
    return [own] + [sandbox_account(platform=platform, handle=f"@{platform}{number}", **options)
                    for number in range(1, count)]


def schedule(client, key, count, platforms=("twitter",)) -> None:
    when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)).isoformat()
    for number in range(count):
        response = client.post(URL, headers=key.headers, json={
            "content": f"Overlap {number}", "platforms": list(platforms), "scheduledAt": when,
        })
        assert response.status_code == 201, response.text


def claim_one_slice(pipeline) -> tuple[str, list[str]]:
    with pipeline.database.transaction() as session:
        targets, _ = dispatch.claim_due(session, now=pipeline.later(hours=1))
    assert len({token for _, token in targets}) == 1
    return targets[0][1], [str(target_id) for target_id, _ in targets]


def run_slice(pipeline, token, target_ids, connector_for, **settings):
    return publications.run_publish_slice(
        database=pipeline.database, settings=pipeline.runtime.settings.replace(**settings),
        connector_for=connector_for, token=token, target_ids=target_ids,
    )


def test_calls_overlap_up_to_the_slice_concurrency(client, session, key, pipeline, sandbox_account):
    with_accounts(session, sandbox_account, "twitter", 6, latencyMs=150)
    schedule(client, key, 1)  # a target on each of the 6 accounts
    token, target_ids = claim_one_slice(pipeline)
    assert len(target_ids) == 6

    timing = Timing()
    outcomes = run_slice(pipeline, token, target_ids, timing, publish_concurrency=3)
    assert outcomes == {target_id: "published" for target_id in target_ids}
    assert deliveries(session) == 6
    # Three calls at a time: two rounds of the longest call, not six calls in turn.
    assert timing.most_in_flight() == 3
    first_round = sorted(timing.calls, key=lambda call: call.started)[:3]
    assert max(call.started for call in first_round) < min(call.ended for call in first_round)


def test_one_account_never_has_more_calls_in_flight_than_its_cap(client, session, key, pipeline):
    own_sandbox_account(session, "twitter").options = {"latencyMs": 100, "latencyJitterMs": 50}
    session.commit()
    schedule(client, key, 6)
    token, target_ids = claim_one_slice(pipeline)

    timing = Timing()
    outcomes = run_slice(
        pipeline, token, target_ids, timing, publish_concurrency=8, publish_concurrency_per_account=2
    )
    assert set(outcomes.values()) == {"published"} and len(outcomes) == 6
    assert timing.most_in_flight() == 2


def test_one_platform_never_has_more_calls_in_flight_than_its_cap(client, session, key, pipeline, sandbox_account):
    twitter = with_accounts(session, sandbox_account, "twitter", 3, latencyMs=150)
    with_accounts(session, sandbox_account, "mastodon", 3, latencyMs=150)
    schedule(client, key, 1, platforms=("twitter", "mastodon"))
    token, target_ids = claim_one_slice(pipeline)
    assert len(target_ids) == 6

    timing = Timing()
    outcomes = run_slice(
        pipeline, token, target_ids, timing,
        publish_concurrency=8, publish_concurrency_per_account=2, publish_concurrency_per_platform=2,
    )
    assert set(outcomes.values()) == {"published"}
    assert timing.most_in_flight(lambda call: call.platform == "twitter") == 2
    assert timing.most_in_flight(lambda call: call.platform == "mastodon") == 2
    # The cap is each platform's: both had their two at once.
    assert timing.most_in_flight() == 4
    assert {call.account_id for call in timing.calls if call.platform == "twitter"} == {str(a.id) for a in twitter}


def test_a_receipt_is_committed_while_a_slower_call_is_in_flight(client, session, key, pipeline, sandbox_account):
    fast, slow = with_accounts(session, sandbox_account, "twitter", 2)
    schedule(client, key, 1)
    token, target_ids = claim_one_slice(pipeline)
    target_on = {
        str(session.get(PostTarget, uuid.UUID(target_id)).account_id): target_id for target_id in target_ids
    }
    fast_target = uuid.UUID(target_on[str(fast.id)])
    slow_in_flight = threading.Event()
    fast_called_while_slow_in_flight, seen_while_slow_in_flight = [], []

    def around_call(credentials, _idempotency_key):
        if str(credentials.account_id) == str(fast.id):
            # The fast call answers once the slow one is in flight.
            fast_called_while_slow_in_flight.append(slow_in_flight.wait(5))
            return
        slow_in_flight.set()
        # The slow call stays in flight until the fast one's receipt is in the database
        # (or gives up after a while: a slice recording in turn would never get there).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with pipeline.database.transaction() as reading:
                fast_row = reading.get(PostTarget, fast_target)
                if fast_row.status == "published":
                    seen_while_slow_in_flight.append(fast_row.external_id)
                    return
            time.sleep(0.02)

    outcomes = run_slice(pipeline, token, target_ids, Timing(around_call), publish_concurrency=2)
    assert set(outcomes.values()) == {"published"}
    assert fast_called_while_slow_in_flight == [True]
    [external_id] = seen_while_slow_in_flight
    assert external_id.startswith("sbx_")


def test_a_slice_out_of_time_gives_back_the_claims_it_has_not_taken(client, session, key, pipeline):
    schedule(client, key, 5)
    token, target_ids = claim_one_slice(pipeline)

    # Two claims are taken at once; the calls (on a fake clock, which they move on)
    # take longer than a quarter of the 2-second lease, so the other three go back.
    with clock.installed(clock.FakeClock()):
        outcomes = run_slice(
            pipeline, token, target_ids, Timing(lambda *_: clock.sleep(0.6)),
            publish_lease_seconds=2, publish_concurrency=2, publish_concurrency_per_account=2,
        )
    assert sorted(outcomes.values()) == ["given back"] * 3 + ["published"] * 2
    session.expire_all()
    for target_id, outcome in outcomes.items():
        target = session.get(PostTarget, uuid.UUID(target_id))
        if outcome == "given back":
            assert (target.status, target.claim_token, target.attempts) == ("pending", None, 0)
        else:
            assert target.status == "published"
    assert deliveries(session) == 2


class WorkerKilled(BaseException):
    """What a job sees of SIGKILL: nothing after this point runs."""


def test_a_job_killed_with_calls_in_flight_calls_each_of_their_targets_once_more_at_most(
    client, session, key, pipeline, sandbox_account, monkeypatch
):
    accounts = with_accounts(session, sandbox_account, "twitter", 4, latencyMs=200)
    schedule(client, key, 1)
    token, target_ids = claim_one_slice(pipeline)
    killed_on = str(accounts[0].id)

    def around_call(credentials, _idempotency_key):
        if str(credentials.account_id) == killed_on:
            time.sleep(0.05)  # the other calls are in flight by then
            raise WorkerKilled()

    timing = Timing(around_call)
    with pytest.raises(WorkerKilled):
        run_slice(pipeline, token, target_ids, timing, publish_concurrency=4)
    # The three other calls reached the platform; none of their receipts was recorded.
    assert deliveries(session) == 3
    session.expire_all()
    assert {session.get(PostTarget, uuid.UUID(target_id)).status for target_id in target_ids} == {"publishing"}

    monkeypatch.setattr(dispatch, "_sweep_interval", sweeps.Interval())
    lease = pipeline.runtime.settings.publish_lease_seconds
    pipeline.run(at=pipeline.later(hours=1, seconds=lease + 1))
    assert deliveries(session) == 4
    calls = dict(session.execute(
        select(SandboxCall.idempotency_key, func.count()).group_by(SandboxCall.idempotency_key)
    ).all())
    # Each call in flight when the job died was made once more (a platform without
    # idempotency keys would have published those twice); the killed call's target,
    # which never reached the platform, once.
    assert sorted(calls.values()) == [1, 2, 2, 2]
    assert calls[next(call.idempotency_key for call in timing.calls if call.account_id == killed_on)] == 1
