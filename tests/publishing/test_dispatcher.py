"""The dispatcher keeps the queue short and the leases honest: it hands claims out in
slices, a job and a claim token each, tops the queue up to its batch size, a claim
whose job is still waiting in the queue keeps its lease instead of being handed out
again, and a claim the queue refused is given back."""
import datetime as dt
import functools

import pytest
from sqlalchemy import select

from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub.publishing import dispatch, jobs

# The dispatcher as its periodic job runs it, with the database, queue and settings given.
dispatch_due = functools.partial(dispatch.dispatch_due, slice_jobs=jobs.SLICE_JOBS)

URL = "/api/v1/posts"


class WaitingQueue:
    """A queue nobody works on: what is enqueued stays waiting."""

    def __init__(self, waiting=()):
        self.waiting = list(waiting)
        self.enqueued = []
        self.calls = []

    def waiting_job_ids(self):
        return list(self.waiting)

    def enqueue(self, function, *args, job_id=None, **kwargs):
        self.enqueued.append(job_id)
        self.calls.append((function, args))
        self.waiting.append(job_id)

    def targets(self):
        """The targets of every job enqueued (a job's args: the token, the target ids)."""
        return [target_id for _, (_, target_ids) in self.calls for target_id in target_ids]


def schedule(client, key, count=1):
    when = (utcnow() + dt.timedelta(minutes=5)).isoformat()
    for number in range(count):
        response = client.post(
            URL, headers=key.headers, json={"content": f"Due {number}", "platforms": ["twitter"], "scheduledAt": when}
        )
        assert response.status_code == 201, response.text


LEASE_SECONDS = 10


class LeasedDispatch:
    """The dispatcher with a 10-second lease and a queue nobody works on, run at times
    counted in seconds from a start an hour from now (when a scheduled post is due)."""

    def __init__(self, db, settings):
        self.db = db
        self.queue = WaitingQueue()
        self.settings = settings.replace(publish_lease_seconds=LEASE_SECONDS)
        self.start = utcnow() + dt.timedelta(hours=1)

    def at(self, seconds: float) -> dt.datetime:
        return self.start + dt.timedelta(seconds=seconds)

    def run(self, seconds: float) -> int:
        return dispatch_due(database=self.db, queue=self.queue, settings=self.settings, now=self.at(seconds))


@pytest.fixture
def leased(client, key, db, settings) -> LeasedDispatch:
    """One post scheduled, and the dispatcher to hand out its claim."""
    schedule(client, key)
    return LeasedDispatch(db, settings)


def the_target(session) -> PostTarget:
    session.expire_all()
    return session.execute(select(PostTarget)).scalar_one()


class TestQueueLength:
    def test_tops_the_queue_up_to_the_batch_size(self, client, key, db, settings):
        schedule(client, key, count=5)
        queue = WaitingQueue(waiting=["other-job-1", "other-job-2"])
        small = settings.replace(dispatch_batch_size=3)
        later = utcnow() + dt.timedelta(hours=1)

        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 1
        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 0
        queue.waiting.clear()  # the workers took them
        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 3
        queue.waiting.clear()
        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 1
        assert len(set(queue.targets())) == 5 and len(queue.enqueued) == 3

    def test_a_waiting_slice_counts_as_full(self, client, key, db, settings):
        schedule(client, key, count=3)
        queue = WaitingQueue()
        small = settings.replace(dispatch_batch_size=4, publish_slice_size=2)
        later = utcnow() + dt.timedelta(hours=1)

        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 3
        # Two slices wait (2 and 1 targets), counted as 2 + 2: no room.
        assert dispatch_due(database=db, queue=queue, settings=small, now=later) == 0


class TestSlices:
    def test_claims_are_handed_out_in_slices_with_a_token_each(self, client, key, db, session, settings):
        schedule(client, key, count=5)
        queue = WaitingQueue()
        sliced = settings.replace(publish_slice_size=2)

        assert dispatch_due(database=db, queue=queue, settings=sliced, now=utcnow() + dt.timedelta(hours=1)) == 5
        assert [function for function, _ in queue.calls] == [jobs.publish_targets] * 3
        assert [len(target_ids) for _, (_, target_ids) in queue.calls] == [2, 2, 1]
        session.expire_all()
        tokens = {str(target.id): target.claim_token for target in session.execute(select(PostTarget)).scalars()}
        for job_id, (_, (token, target_ids)) in zip(queue.enqueued, queue.calls):
            assert job_id == f"publish-{token}"
            assert {tokens[target_id] for target_id in target_ids} == {token}
        assert len({token for token, _ in (args for _, args in queue.calls)}) == 3

    def test_a_waiting_job_of_one_target_from_before_slices_keeps_its_claim(self, leased, db, session):
        with db.transaction() as claim_session:
            [(target_id, token)], _ = dispatch.claim_due(claim_session, now=leased.at(0), lease_seconds=LEASE_SECONDS)
        # What the dispatcher named a job before slices: "<kind>-<target id>-<token>".
        leased.queue = WaitingQueue(waiting=[f"publish-{target_id}-{token}"])

        assert leased.run(30) == 0
        target = the_target(session)
        assert (target.claim_token, target.lease_until) == (token, leased.at(40))


class TestLeases:
    def test_a_claim_waiting_in_the_queue_keeps_its_lease(self, leased, session):
        queue = leased.queue
        assert leased.run(0) == 1
        [job_id] = queue.enqueued
        token = the_target(session).claim_token
        assert job_id == f"publish-{token}"

        # Before half the lease has passed nothing changes...
        leased.run(4)
        assert the_target(session).lease_until == leased.at(10)
        # ...after it, the waiting claim is renewed, not handed out again.
        assert leased.run(6) == 0
        assert the_target(session).lease_until == leased.at(16)
        # Even when the lease has run out while it waited.
        assert leased.run(30) == 0
        target = the_target(session)
        assert (target.claim_token, target.lease_until) == (token, leased.at(40))
        assert queue.enqueued == [job_id]

    def test_a_claim_the_queue_lost_is_handed_out_again_when_its_lease_runs_out(self, leased, session):
        queue = leased.queue
        assert leased.run(0) == 1
        queue.waiting.clear()  # lost: Redis restarted empty, or a worker died with it
        assert leased.run(9) == 0
        assert leased.run(11) == 1
        first, second = queue.enqueued
        assert first != second and second.endswith(the_target(session).claim_token)

    def test_an_older_job_of_the_target_does_not_keep_the_new_claim(self, leased):
        queue = leased.queue
        leased.run(0)
        stale = queue.enqueued[0]
        queue.waiting.clear()
        leased.run(11)
        # Only the first job is still waiting (the second was taken by a worker that died).
        queue.waiting = [stale]
        assert leased.run(22) == 1
        assert len(queue.enqueued) == 3


class FailingQueue(WaitingQueue):
    """Takes `accepts` jobs, then goes away."""

    def __init__(self, accepts):
        super().__init__()
        self.accepts = accepts

    def enqueue(self, function, *args, job_id=None, **kwargs):
        if len(self.enqueued) >= self.accepts:
            raise ConnectionError("queue down")
        super().enqueue(function, *args, job_id=job_id, **kwargs)


class TestQueueGoingAway:
    def test_claims_the_queue_refused_are_given_back_at_once(self, client, key, db, session, settings):
        schedule(client, key, count=3)
        later = utcnow() + dt.timedelta(hours=1)
        one_a_job = settings.replace(publish_slice_size=1)
        assert dispatch_due(database=db, queue=FailingQueue(accepts=1), settings=one_a_job, now=later) == 1
        session.expire_all()
        statuses = sorted(target.status for target in session.execute(select(PostTarget)).scalars())
        assert statuses == ["pending", "pending", "publishing"]
        # Due again at the next dispatch, without waiting for a lease to run out.
        queue = WaitingQueue()
        assert dispatch_due(database=db, queue=queue, settings=settings, now=later) == 2
