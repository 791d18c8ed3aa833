"""The dispatcher: claims due targets and due first comments, and hands them to the
queue, a job per slice of claims.

It claims due targets (through socialpub.claims: SKIP LOCKED on PostgreSQL; SQLite
serialises writers) by giving them a lease and a claim token, one token per slice of
up to publish_slice_size targets, and hands each slice to the queue as one job (see
runner.py for what the job does). A lease that runs out puts the target back in the
next dispatch.

The jobs it enqueues are given to it (`slice_jobs`), by the jobs module that runs it:
the code a job runs never imports the jobs.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import uuid
from typing import Any, Callable, Mapping

from sqlalchemy import and_, or_, update

from persistence import plans
from persistence.posts import CommentStatus, PostTarget, TargetStatus
from persistence.types import utcnow
from socialpub import claims, sweeps
from socialpub.publishing.service import settle_unsettled_posts

logger = logging.getLogger("socialpub.publishing")


@dataclasses.dataclass(frozen=True)
class Kind:
    """Where one kind of claim lives on a target: its publication, or its first comment."""

    name: str  # the key of its job in `slice_jobs`, and the prefix of that job's id
    prefix: str  # of its columns on PostTarget
    status: Any
    pending: str
    claimed: str
    failed: str
    due: Any
    lease: Any
    token: Any
    attempts: Any


PUBLISH = Kind(
    "publish", "", PostTarget.status, TargetStatus.PENDING, TargetStatus.PUBLISHING, TargetStatus.FAILED,
    PostTarget.next_attempt_at, PostTarget.lease_until, PostTarget.claim_token, PostTarget.attempts,
)
COMMENT = Kind(
    "comment", "comment_", PostTarget.comment_status, CommentStatus.PENDING, CommentStatus.POSTING,
    CommentStatus.FAILED, PostTarget.comment_next_attempt_at, PostTarget.comment_lease_until,
    PostTarget.comment_claim_token, PostTarget.comment_attempts,
)
KINDS = {kind.name: kind for kind in (PUBLISH, COMMENT)}


# Why a claim whose every run stopped before recording an outcome fails: its last
# call may have reached the platform, and only the user can tell.
INTERRUPTED_CODE = "publish_interrupted"
INTERRUPTED_MESSAGE = (
    "The job stopped before recording the platform's answer on each of its {attempts} attempts; "
    "the platform may have received it: check the account before publishing again."
)


def _fail_interrupted(session, kind: Kind, *, now, max_attempts: int) -> int:
    """Fails the claims whose lease ran out after their last attempt: every run that
    took them stopped (its worker died, or it could not record the outcome) before
    recording anything, max_attempts times. Handed out again, they would be for ever."""
    interrupted = and_(kind.status == kind.claimed, kind.lease < now, kind.attempts >= max_attempts)
    ids = claims.due_ids(session, PostTarget, interrupted)
    failed = claims.set_where_still(session, PostTarget, ids, interrupted, {
        kind.status: kind.failed, kind.lease: None, kind.token: None,
        getattr(PostTarget, kind.prefix + "error_code"): INTERRUPTED_CODE,
        getattr(PostTarget, kind.prefix + "error_message"): INTERRUPTED_MESSAGE.format(attempts=max_attempts),
    })
    if failed:
        logger.error("claims failed after repeated interrupted runs",
                     extra={"kind": kind.name, "count": len(failed), "max_attempts": max_attempts})
    return len(failed)


def _claim(session, kind: Kind, *, now, lease, limit, slice_size, max_attempts):
    _fail_interrupted(session, kind, now=now, max_attempts=max_attempts)
    pending = and_(kind.status == kind.pending, kind.due <= now)
    expired = and_(kind.status == kind.claimed, kind.lease < now)  # a lease that ran out
    due = or_(pending, expired)
    # Lock the candidates first, then update exactly those. As a subquery of the
    # UPDATE, PostgreSQL may run `LIMIT ... SKIP LOCKED` again while rechecking rows a
    # concurrent claim changed, each run finding other rows: two dispatchers claiming
    # 500 each then take the whole table, and hold it for seconds.
    # Two reads, each along an index in its order: claims whose lease ran out
    # (ix_post_targets_lease), then pending ones in the order they fell due
    # (ix_post_targets_due). As one OR, PostgreSQL read every due target and sorted
    # them for each dispatch: a cost growing with the backlog of a burst.
    ids = claims.due_ids(session, PostTarget, expired, order_by=kind.lease, limit=limit)
    if len(ids) < limit:
        ids += claims.due_ids(session, PostTarget, pending, order_by=kind.due, limit=limit - len(ids))
    taken = []
    # A token per slice: one job works through a slice, and the token in its id tells
    # the dispatcher exactly which claims are still waiting for it.
    for start in range(0, len(ids), slice_size):
        chunk, token = ids[start:start + slice_size], str(uuid.uuid4())
        claimed = set(claims.set_where_still(
            session, PostTarget, chunk, due, {kind.status: kind.claimed, kind.lease: now + lease, kind.token: token}
        ))
        taken += [(target_id, token) for target_id in chunk if target_id in claimed]
    return taken


def claim_due(
    session, *, now=None, lease_seconds=120, limit=500, slice_size=50, max_attempts=5
) -> tuple[list, list]:
    """Claims due targets and due first comments, in slices of at most slice_size
    sharing a claim token. Returns (targets, comments), each a list of (target id,
    claim token): claims whose lease ran out first, then in the order they fell due.
    A claim whose runs were interrupted max_attempts times fails instead (see
    _fail_interrupted)."""
    now = now or utcnow()
    lease = dt.timedelta(seconds=lease_seconds)
    shape = dict(now=now, lease=lease, limit=limit, slice_size=slice_size, max_attempts=max_attempts)
    targets = _claim(session, PUBLISH, **shape)
    comments = _claim(session, COMMENT, **shape)
    session.commit()
    return targets, comments


def _waiting_claim(job_id) -> tuple[Kind, str] | None:
    """The kind and claim token a waiting job holds, if it is a publishing job. The
    token is the id's last 36 characters: also for jobs of one target each, named
    "<kind>-<target id>-<token>", that a previous version may have left in the queue."""
    name, _, rest = (job_id or "").partition("-")
    if name in KINDS and len(rest) >= 36:
        return KINDS[name], rest[-36:]
    return None


def _slices(kind: Kind, taken) -> list[tuple[Kind, str, list]]:
    """Claims grouped by token, in order: one job each."""
    by_token: dict[str, list] = {}
    for target_id, token in taken:
        by_token.setdefault(token, []).append(target_id)
    return [(kind, token, target_ids) for token, target_ids in by_token.items()]


def renew_waiting_claims(session, job_ids, *, now, lease: dt.timedelta) -> int:
    """Renews the lease of each claim whose job is still waiting in the queue, once
    half of it has passed. A lease is there to recover a job that started and died, or
    a claim the queue lost; a claim that is merely waiting its turn keeps it, rather
    than being handed out again (its first job then finding the token gone)."""
    waiting: dict[str, set[str]] = {}
    for job_id in job_ids:
        claim = _waiting_claim(job_id)
        if claim is not None:
            waiting.setdefault(claim[0].name, set()).add(claim[1])
    renewed = 0
    for name, tokens in waiting.items():
        kind = KINDS[name]
        # Usually none: only claims older than half a lease.
        renewable = and_(kind.status == kind.claimed, kind.lease < now + lease / 2, kind.token.in_(tokens))
        # A row a job or the other dispatcher holds is left alone: never wait, never deadlock.
        ids = claims.due_ids(session, PostTarget, renewable)
        renewed += len(claims.set_where_still(session, PostTarget, ids, renewable, {kind.lease: now + lease}))
    return renewed


def _waiting_targets(job_ids, slice_size: int) -> int:
    """How many claims the waiting jobs hold, at most: a slice counts as full."""
    return sum(slice_size if _waiting_claim(job_id) else 1 for job_id in job_ids)


# When this process next sweeps for posts left unsettled, and where that sweep goes on from.
_sweep_interval = sweeps.Interval()
_sweep_position = sweeps.Position()


def dispatch_due(*, database, queue, settings, slice_jobs: Mapping[str, Callable], now=None) -> int:
    """One dispatch: claim what is due and hand it to the queue, a job per slice of
    claims: `slice_jobs[kind]` ("publish", "comment") called with the claim token and
    the slice's target ids. Returns how many claims it handed out.

    The queue is only topped up to dispatch_batch_size waiting claims, so a burst of
    due posts waits in the database, not in the queue, and claims whose jobs are still
    waiting keep their leases. A queue that cannot be reached claims nothing, and
    claims it refuses are given back at once rather than when their leases run out.
    Now and then it also settles posts a job that died left unsettled."""
    now = now or utcnow()
    # As often as a slice takes claims: a quarter of a lease.
    if _sweep_interval.due(settings.publish_lease_seconds / 4):
        with database.transaction() as session:
            settle_unsettled_posts(session, now=now, position=_sweep_position)
    waiting = queue.waiting_job_ids()
    room = settings.dispatch_batch_size - _waiting_targets(waiting, settings.publish_slice_size)
    with database.transaction() as session:
        renew_waiting_claims(session, waiting, now=now, lease=dt.timedelta(seconds=settings.publish_lease_seconds))
        if room <= 0:
            return 0
        targets, comments = claim_due(
            session, now=now, lease_seconds=settings.publish_lease_seconds, limit=room,
            slice_size=settings.publish_slice_size, max_attempts=settings.publish_max_attempts,
        )
    handed = 0
    for kind, taken in ((PUBLISH, targets), (COMMENT, comments)):
        # A job a slice; its id names what it works on and the claim it holds,
        # "<kind>-<token>" (see _waiting_claim); what the queue refused is given back
        # at once, due as before.
        handed += claims.hand_out(
            database=database, queue=queue, run=slice_jobs[kind.name], model=PostTarget, job_name=kind.name,
            slices=[(token, target_ids) for _, token, target_ids in _slices(kind, taken)],
            give_back=lambda session, token, target_ids, kind=kind: give_back(session, kind, target_ids, {token}),
        )
    return handed


def give_back(session, kind: Kind, target_ids, tokens) -> None:
    """Puts claims back to pending, due as before, if they still hold one of the tokens."""
    session.execute(
        update(PostTarget)
        .where(
            PostTarget.id.in_(target_ids),
            plans.checked_on_each(and_(kind.status == kind.claimed, kind.token.in_(tokens))),
        )
        .values({kind.status: kind.pending, kind.lease: None, kind.token: None})
        .execution_options(synchronize_session=False)
    )
