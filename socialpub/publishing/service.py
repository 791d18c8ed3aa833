"""The publishing pipeline: targets, publish now, the dispatcher's claims, and what a
job does with a claimed target or first comment.

The database is the truth. A scheduled post has one target per (platform, active
account). The dispatcher claims due targets (SKIP LOCKED on PostgreSQL; SQLite
serialises writers) by giving them a lease and a claim token, one token per slice of
up to publish_slice_size targets, and hands each slice to the queue as one job. The
job goes through its targets one at a time: it acts on a target only while it holds
the current token, calls the platform with the target's id as idempotency key, and
records the platform's receipt before anything else, and before its next call. A job
that runs twice, or after a crash, finds the target published (or its token gone)
and does nothing; a lease that runs out puts the target back in the next dispatch.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import random
import time
import uuid
from typing import Any

from sqlalchemy import String, and_, bindparam, or_, select, update
from sqlalchemy.orm import joinedload

from persistence.accounts import ConnectedAccount
from persistence.posts import FirstComment, Post, PostTarget
from persistence.types import UtcDateTime, utcnow
from socialpub import crypto
from socialpub.connectors.base import PlatformError, Published
from socialpub.errors import ApiError
from socialpub.accounts import service as accounts
from socialpub.events import service as events
from socialpub.platforms import supports_replies
from socialpub.tenancy import TenantScope

logger = logging.getLogger("socialpub.publishing")

PENDING, PUBLISHING, PUBLISHED, FAILED = "pending", "publishing", "published", "failed"
COMMENT_PENDING, COMMENT_POSTING, COMMENT_POSTED, COMMENT_FAILED = "pending", "posting", "posted", "failed"


# -- targets of a post ------------------------------------------------------------

def guard_editable(post: Post) -> None:
    """A post that has gone out anywhere, or is going out now, cannot change: what a
    platform shows would no longer be the post (and a draft never has targets that
    went out). Publishing it again retries where it failed."""
    if post.status == "published":
        raise ApiError.conflict("A published post cannot be edited.")
    went_out = sorted({t.platform for t in post.targets if t.status == PUBLISHED})
    if went_out:
        raise ApiError.conflict(
            f"The post has already gone out on {', '.join(went_out)}, so it cannot be edited; "
            "publish it again to retry where it failed."
        )
    if any(t.status == PUBLISHING for t in post.targets):
        raise ApiError.conflict("The post is being published right now; try again in a moment.")


def sync_targets(scope: TenantScope, post: Post) -> None:
    """Make the post's targets match its state: none for a draft; one per active
    account on its platforms, due at scheduledAt, for a scheduled post."""
    if post.status == "draft":
        for target in list(post.targets):
            if target.status in (PENDING, FAILED):
                post.targets.remove(target)
        return
    if post.status != "scheduled":
        return
    for target in post.targets:
        if target.status == FAILED:
            # Scheduling a failed post again retries what failed, never what went out.
            target.status, target.attempts = PENDING, 0
            target.error_code = target.error_message = None
    wanted = {account.id: account for account in accounts.active_accounts(scope=scope, platforms=post.platforms)}
    for target in list(post.targets):
        if target.account_id not in wanted and target.status in (PENDING, FAILED):
            post.targets.remove(target)
    have = {target.account_id for target in post.targets}
    for account_id, account in wanted.items():
        if account_id not in have:
            post.targets.append(
                PostTarget(
                    # Its id now, not at flush: the post.scheduled event shows it.
                    id=uuid.uuid4(), workspace_id=post.workspace_id, livemode=post.livemode, account_id=account_id,
                    platform=account.platform, status=PENDING, attempts=0,
                )
            )
    for target in post.targets:
        if target.status == PENDING:
            target.next_attempt_at = post.scheduled_at


def publish_now(*, session, principal, post_id) -> Post:
    """Due at once: the dispatcher, which runs every second, hands it out."""
    scope = TenantScope.of(session, principal)
    post = scope.get(Post, post_id, resource="post", for_update=True)
    start_publishing(scope, post)
    session.commit()
    return post


def start_publishing(scope: TenantScope, post: Post) -> None:
    """Makes a loaded post due now; the caller commits. Publish now and bulk publish."""
    from socialpub.posts import service as post_service

    if post.status == "published":
        raise ApiError.conflict("The post is already published.")
    if any(t.status == PUBLISHING for t in post.targets):
        raise ApiError.conflict("The post is being published right now.")
    post_service.check_publishable(scope, post.content, list(post.platforms))
    post.status = "scheduled"
    post.scheduled_at = utcnow()
    sync_targets(scope, post)
    events.record_post_event(scope.session, post, "post.scheduled")


def _derived_status(current: str, statuses: set[str]) -> str:
    """What a post's status should be, given its targets' statuses."""
    if not statuses or current not in ("scheduled", "failed", "published"):
        return current
    if statuses == {PUBLISHED}:
        return "published"
    if FAILED in statuses and not statuses & {PENDING, PUBLISHING}:
        return "failed"
    return "scheduled"


def settle_post(session, post: Post) -> None:
    """Derive the post's status from its targets, with an event when it changes."""
    targets = post.targets
    new_status = _derived_status(post.status, {t.status for t in targets})
    if new_status != post.status:
        post.status = new_status
        if new_status == "published":
            post.published_at = max(t.published_at for t in targets if t.published_at)
        if new_status in ("published", "failed"):
            events.record_post_event(session, post, f"post.{new_status}")


# -- the dispatcher ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Kind:
    """Where one kind of claim lives on a target: its publication, or its first comment."""

    name: str
    function: str  # the job that works through a slice of these claims
    status: Any
    pending: str
    claimed: str
    due: Any
    lease: Any
    token: Any
    attempts: Any


PUBLISH = _Kind(
    "publish", "workers.jobs.publish_targets", PostTarget.status, PENDING, PUBLISHING,
    PostTarget.next_attempt_at, PostTarget.lease_until, PostTarget.claim_token, PostTarget.attempts,
)
COMMENT = _Kind(
    "comment", "workers.jobs.post_first_comments", PostTarget.comment_status, COMMENT_PENDING, COMMENT_POSTING,
    PostTarget.comment_next_attempt_at, PostTarget.comment_lease_until, PostTarget.comment_claim_token,
    PostTarget.comment_attempts,
)
_KINDS = {kind.name: kind for kind in (PUBLISH, COMMENT)}


def _claim(session, kind: _Kind, *, now, lease, limit, slice_size):
    due = or_(
        and_(kind.status == kind.pending, kind.due <= now),
        and_(kind.status == kind.claimed, kind.lease < now),  # a lease that ran out
    )
    candidates = select(PostTarget.id).where(due).order_by(kind.due).limit(limit)
    if session.bind.dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    # Lock the candidates first, then update exactly those. As a subquery of the
    # UPDATE, PostgreSQL may run `LIMIT ... SKIP LOCKED` again while rechecking rows a
    # concurrent claim changed, each run finding other rows: two dispatchers claiming
    # 500 each then take the whole table, and hold it for seconds.
    ids = list(session.execute(candidates).scalars())
    claims = []
    # A token per slice: one job works through a slice, and the token in its id tells
    # the dispatcher exactly which claims are still waiting for it.
    for start in range(0, len(ids), slice_size):
        chunk, token = ids[start:start + slice_size], str(uuid.uuid4())
        statement = (
            update(PostTarget)
            .where(PostTarget.id.in_(chunk), due)
            .values({kind.status: kind.claimed, kind.lease: now + lease, kind.token: token})
            .returning(PostTarget.id)
            .execution_options(synchronize_session=False)
        )
        claimed = set(session.execute(statement).scalars())
        claims += [(target_id, token) for target_id in chunk if target_id in claimed]
    return claims


def claim_due(session, *, now=None, lease_seconds=120, limit=500, slice_size=50) -> tuple[list, list]:
    """Claims due targets and due first comments, in slices of at most slice_size
    sharing a claim token. Returns (targets, comments), each a list of (target id,
    claim token) in the order they fell due."""
    now = now or utcnow()
    lease = dt.timedelta(seconds=lease_seconds)
    targets = _claim(session, PUBLISH, now=now, lease=lease, limit=limit, slice_size=slice_size)
    comments = _claim(session, COMMENT, now=now, lease=lease, limit=limit, slice_size=slice_size)
    session.commit()
    return targets, comments


# A job's id names what it works on and the claim it holds: "<kind>-<token>".
def _job_id(kind: _Kind, token: str) -> str:
    return f"{kind.name}-{token}"


def _waiting_claim(job_id) -> tuple[_Kind, str] | None:
    """The kind and claim token a waiting job holds, if it is a publishing job. The
    token is the id's last 36 characters: also for jobs of one target each, named
    "<kind>-<target id>-<token>", that a previous version may have left in the queue."""
    name, _, rest = (job_id or "").partition("-")
    if name in _KINDS and len(rest) >= 36:
        return _KINDS[name], rest[-36:]
    return None


def _slices(kind: _Kind, claims) -> list[tuple[_Kind, str, list]]:
    """Claims grouped by token, in order: one job each."""
    by_token: dict[str, list] = {}
    for target_id, token in claims:
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
        kind = _KINDS[name]
        # Usually none: only claims older than half a lease.
        renewable = and_(kind.status == kind.claimed, kind.lease < now + lease / 2, kind.token.in_(tokens))
        query = select(PostTarget.id).where(renewable)
        if session.bind.dialect.name == "postgresql":
            # A row a job or the other dispatcher holds is left alone: never wait, never deadlock.
            query = query.with_for_update(skip_locked=True)
        ids = list(session.execute(query).scalars())
        if ids:
            session.execute(
                update(PostTarget).where(PostTarget.id.in_(ids), renewable).values({kind.lease: now + lease})
                .execution_options(synchronize_session=False)
            )
            renewed += len(ids)
    return renewed


def _waiting_targets(job_ids, slice_size: int) -> int:
    """How many claims the waiting jobs hold, at most: a slice counts as full."""
    return sum(slice_size if _waiting_claim(job_id) else 1 for job_id in job_ids)


# When this process next sweeps for posts left unsettled (time.monotonic()).
_next_sweep_at = 0.0


def dispatch_due(*, database, queue, settings, now=None) -> int:
    """One dispatch: claim what is due and hand it to the queue, a job per slice of
    claims. Returns how many claims it handed out.

    The queue is only topped up to dispatch_batch_size waiting claims, so a burst of
    due posts waits in the database, not in the queue, and claims whose jobs are still
    waiting keep their leases. A queue that cannot be reached claims nothing, and
    claims it refuses are given back at once rather than when their leases run out.
    Now and then it also settles posts a job that died left unsettled."""
    now = now or utcnow()
    global _next_sweep_at
    if time.monotonic() >= _next_sweep_at:
        # As often as a slice takes claims: a quarter of a lease.
        _next_sweep_at = time.monotonic() + settings.publish_lease_seconds / 4
        with database.transaction() as session:
            settle_unsettled_posts(session, now=now)
    waiting = queue.waiting_job_ids()
    room = settings.dispatch_batch_size - _waiting_targets(waiting, settings.publish_slice_size)
    with database.transaction() as session:
        renew_waiting_claims(session, waiting, now=now, lease=dt.timedelta(seconds=settings.publish_lease_seconds))
        if room <= 0:
            return 0
        targets, comments = claim_due(
            session, now=now, lease_seconds=settings.publish_lease_seconds, limit=room,
            slice_size=settings.publish_slice_size,
        )
    slices = _slices(PUBLISH, targets) + _slices(COMMENT, comments)
    for index, (kind, token, target_ids) in enumerate(slices):
        try:
            queue.enqueue(kind.function, token, [str(target_id) for target_id in target_ids], job_id=_job_id(kind, token))
        except Exception:
            _release_claims(database, slices[index:])
            raise
    return len(targets) + len(comments)


def _give_back(session, kind: _Kind, target_ids, tokens) -> None:
    """Puts claims back to pending, due as before, if they still hold one of the tokens."""
    session.execute(
        update(PostTarget)
        .where(PostTarget.id.in_(target_ids), kind.status == kind.claimed, kind.token.in_(tokens))
        .values({kind.status: kind.pending, kind.lease: None, kind.token: None})
        .execution_options(synchronize_session=False)
    )


def _release_claims(database, slices) -> None:
    """Gives back claims that never reached the queue."""
    try:
        with database.transaction() as session:
            for kind, token, target_ids in slices:
                _give_back(session, kind, target_ids, {token})
    except Exception:  # noqa: BLE001 - the leases still bring them back
        logger.warning("could not give back claims the queue refused", exc_info=True)


# -- what a job does ----------------------------------------------------------------

def backoff_seconds(attempt: int, settings, retry_after: float | None = None) -> float:
    if retry_after is not None:
        return min(max(float(retry_after), 1.0), settings.retry_max_seconds)
    delay = settings.retry_base_seconds * (2 ** max(attempt - 1, 0))
    return min(delay * random.uniform(0.8, 1.2), settings.retry_max_seconds)


def _locked_target(session, target_id, *options) -> PostTarget | None:
    query = select(PostTarget).where(PostTarget.id == uuid.UUID(str(target_id))).options(*options)
    if session.bind.dialect.name == "postgresql":
        query = query.with_for_update(of=PostTarget)
    return session.execute(query).scalar_one_or_none()


@dataclasses.dataclass(frozen=True)
class _Taken:
    """A claim this run took, and what its platform call needs."""

    target_id: uuid.UUID
    run_token: str
    attempt: int
    post_id: uuid.UUID
    platform: str
    account: Any  # a row of _ACCOUNT_COLUMNS: the connector and what its credentials are made of
    content: str
    parent: Published | None = None  # what a first comment replies to


def _run_slice(
    *, database, settings, kind: _Kind, token, target_ids, take, ready, record, prepare=None, settle=None
) -> dict[str, str]:
    """Works through one slice of claims, one target at a time: take its claim, get
    its call ready, call the platform, record the outcome. Then settles the posts
    whose targets it recorded. Returns what happened to each target.

    Each outcome is committed in a transaction of its own, right after its call and
    before the next claim is taken: a platform without idempotency keys must never
    have a receipt waiting behind other calls, nor lose one to whatever goes wrong
    with the next target. A target whose call cannot even be made (its account
    unusable, its credentials unreadable) fails for good, recorded like a refusal:
    trying again would meet the same, and the rest of the slice carries on.
    `prepare` reads what the calls need for the whole slice at once.

    A slice takes claims for a quarter of a lease at most, then gives the rest back to
    the next dispatch: the claims it has not reached keep the lease they were
    dispatched with (renewed while the job waited: at least half a lease left), and a
    slow platform must not hold them past it.

    Settling the posts once for the slice costs a fraction of settling them after each
    receipt. A job that dies before then leaves them to the dispatcher's sweep
    (settle_unsettled_posts)."""
    outcomes: dict[str, str] = {}
    remaining = [uuid.UUID(str(target_id)) for target_id in target_ids]
    stop_taking_at = time.monotonic() + settings.publish_lease_seconds / 4

    def take_next(session) -> _Taken | None:
        while remaining:
            if time.monotonic() > stop_taking_at:
                _give_back(session, kind, remaining, {token})
                outcomes.update((str(target_id), "given back") for target_id in remaining)
                remaining.clear()
                return None
            target_id = remaining.pop(0)
            taken = take(session, target_id, token, settings, prepared)
            if taken is not None:
                return taken
            outcomes[str(target_id)] = "skipped"
        return None

    with database.transaction() as session:
        prepared = prepare(session, remaining) if prepare is not None else None
        taken = take_next(session)
    recorded_posts = []
    while taken is not None:
        receipt, error = _call_platform(ready, taken)
        recorded, failed_to_take = taken, None
        with database.transaction() as session:
            outcome = outcomes[str(recorded.target_id)] = record(session, recorded, receipt, error, settings)
            # The next claim is taken in the same commit (one commit a target, not
            # two), but behind a savepoint: whatever goes wrong taking it undoes only
            # the take, and the receipt still commits.
            try:
                with session.begin_nested():
                    taken = take_next(session)
            except Exception as exc:  # noqa: BLE001 - raised again once the receipt is in
                failed_to_take = exc
        if outcome != "deleted":
            recorded_posts.append(recorded.post_id)
        if failed_to_take is not None:
            raise failed_to_take
    if settle is not None and recorded_posts:
        with database.transaction() as session:
            settle(session, recorded_posts)
    return outcomes


# What a job runs for every target, built once with bound parameters (named b_...,
# apart from the columns): building a statement costs more CPU than running it. They
# run on the session's connection (see _execute).

def _take_statement(kind: _Kind, *returning):
    """Takes the claim for this run, if it still holds the dispatcher's token: a
    duplicate of the job then finds no token."""
    return (
        update(PostTarget)
        .where(PostTarget.id == bindparam("b_target_id"), kind.status == kind.claimed, kind.token == bindparam("b_token"))
        .values({
            kind.token: bindparam("b_run_token", type_=String()),
            kind.attempts: kind.attempts + 1,
            kind.lease: bindparam("b_lease_until", type_=UtcDateTime()),
        })
        .returning(kind.attempts, *returning)
    )


# When the target's account last changed: what a slice read of it may be out of date.
# Every change to an account (its status too: disconnected, refused) moves this, so an
# account disconnected since the slice read it is read again, and does not get the post.
_ACCOUNT_UPDATED_AT = (
    select(ConnectedAccount.updated_at).where(ConnectedAccount.id == PostTarget.account_id).scalar_subquery()
)
_TAKE_PUBLICATION = _take_statement(PUBLISH, PostTarget.post_id, PostTarget.platform, _ACCOUNT_UPDATED_AT)
_TAKE_COMMENT = _take_statement(
    COMMENT, PostTarget.post_id, PostTarget.account_id, PostTarget.platform,
    PostTarget.external_id, PostTarget.url, PostTarget.reference,
)
# The account's connector and what accounts.credentials_for reads.
_ACCOUNT_COLUMNS = (
    ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.handle, ConnectedAccount.options,
    ConnectedAccount.secrets_encrypted, ConnectedAccount.connector, ConnectedAccount.status,
)
# What the calls of a slice send, and through which account, read once for the slice
# (a post being published cannot be edited); an account changed since is read again.
_PUBLICATIONS_FOR_CALLS = (
    select(
        PostTarget.id.label("target_id"), Post.content, ConnectedAccount.updated_at.label("account_updated_at"),
        *_ACCOUNT_COLUMNS,
    )
    .join(Post, Post.id == PostTarget.post_id)
    .join(ConnectedAccount, ConnectedAccount.id == PostTarget.account_id)
    .where(PostTarget.id.in_(bindparam("b_target_ids", expanding=True)))
)
# A first comment can be removed while it is being posted: read as each call is made.
_COMMENT_FOR_CALL = (
    select(FirstComment.content, *_ACCOUNT_COLUMNS)
    .select_from(ConnectedAccount)
    .outerjoin(FirstComment, FirstComment.post_id == bindparam("b_post_id"))
    .where(ConnectedAccount.id == bindparam("b_account_id"))
)
_RECORD_PUBLISHED = (
    update(PostTarget).where(PostTarget.id == bindparam("b_target_id"), PostTarget.status != PUBLISHED)
    .returning(PostTarget.id)
)


def _execute(session, statement, parameters):
    """Runs a statement that loads no objects on the session's connection: through the
    session, the ORM's handling of an UPDATE costs more than the statement itself."""
    return session.connection().execute(statement, parameters)


def _take(session, statement, target_id, token, settings):
    run_token = str(uuid.uuid4())
    lease_until = utcnow() + dt.timedelta(seconds=settings.publish_lease_seconds)
    row = _execute(
        session, statement,
        {"b_target_id": target_id, "b_token": token, "b_run_token": run_token, "b_lease_until": lease_until},
    ).one_or_none()
    return None if row is None else (run_token, *row)


def settle_posts(session, post_ids, *, skip_locked: bool = False) -> int:
    """What follows from the outcomes recorded on these posts' targets: each post's
    first comment queued on its targets newly published, and settle_post. The posts
    are locked first, in one order (two jobs settling posts they share cannot
    deadlock), and read after: set_first_comment holds the same lock while it queues
    the comment on the targets already published, so between the two every published
    target gets it once. Returns how many posts it locked."""
    lock = select(Post.id).where(Post.id.in_(set(post_ids))).order_by(Post.id)
    if session.bind.dialect.name == "postgresql":
        lock = lock.with_for_update(skip_locked=skip_locked)
    locked = list(session.execute(lock).scalars())
    if locked:
        # Joined rather than selectin: a post has few targets, and one more query costs
        # more than repeating the post's columns.
        posts = session.execute(
            select(Post).where(Post.id.in_(locked))
            .options(joinedload(Post.targets), joinedload(Post.first_comment))
            .execution_options(populate_existing=True)
        ).unique().scalars()
        now = utcnow()
        for post in posts:
            if post.first_comment is not None:
                for target in post.targets:
                    if target.status == PUBLISHED and target.comment_status is None:
                        _queue_comment(target, now)
            settle_post(session, post)
    return len(locked)


def settle_unsettled_posts(session, *, now, limit: int = 500) -> int:
    """Settles due posts that still say scheduled although none of their targets is
    pending or being published: what a job leaves when it dies between recording its
    receipts and settling their posts. Returns how many it settled. (A post with a
    target still in flight is settled by the job that has it.)"""
    in_flight = select(PostTarget.id).where(
        PostTarget.post_id == Post.id, PostTarget.status.in_((PENDING, PUBLISHING))
    ).exists()
    has_targets = select(PostTarget.id).where(PostTarget.post_id == Post.id).exists()
    ids = list(session.execute(
        select(Post.id).where(Post.status == "scheduled", Post.scheduled_at <= now, has_targets, ~in_flight).limit(limit)
    ).scalars())
    # Skipping what someone else holds: whoever holds a post settles it, or the next sweep.
    return settle_posts(session, ids, skip_locked=True) if ids else 0


def run_publish_slice(*, database, settings, connector_for, token, target_ids) -> dict[str, str]:
    """Publishes a slice of claimed targets. Returns what happened to each."""

    def ready(taken: _Taken):
        connector, credentials = _connection(connector_for, taken)
        return lambda: connector.publish(credentials, taken.content, idempotency_key=str(taken.target_id))

    return _run_slice(
        database=database, settings=settings, kind=PUBLISH, token=token, target_ids=target_ids,
        prepare=_read_publications, take=_take_publication, ready=ready, record=_record_publication,
        settle=settle_posts,
    )


def run_publish_job(*, database, settings, connector_for, target_id, token) -> str:
    """Publishes one claimed target. Returns what happened, for logs and tests."""
    outcomes = run_publish_slice(
        database=database, settings=settings, connector_for=connector_for, token=token, target_ids=[target_id]
    )
    return outcomes[str(uuid.UUID(str(target_id)))]


def _read_publications(session, target_ids) -> dict:
    return {row.target_id: row for row in _execute(session, _PUBLICATIONS_FOR_CALLS, {"b_target_ids": target_ids})}


def _take_publication(session, target_id, token, settings, publications) -> _Taken | None:
    taken = _take(session, _TAKE_PUBLICATION, target_id, token, settings)
    if taken is None:
        return None
    run_token, attempt, post_id, platform, account_updated_at = taken
    found = publications.get(target_id)
    if found is None or found.account_updated_at != account_updated_at:
        found = _read_publications(session, [target_id])[target_id]
    return _Taken(target_id, run_token, attempt, post_id, platform, found, found.content)


def _record_publication(session, taken: _Taken, receipt: Published | None, error: PlatformError | None, settings) -> str:
    """Records the outcome of one call. What follows from it for the post (its status,
    its first comment) is left to settle_posts at the end of the slice."""
    if receipt is not None:
        # The platform has it: published, whoever holds the claim now.
        now = utcnow()
        recorded = _execute(session, _RECORD_PUBLISHED, dict(
            b_target_id=taken.target_id, status=PUBLISHED, external_id=receipt.external_id, url=receipt.url,
            reference=dict(receipt.reference or {}), published_at=now, error_code=None, error_message=None,
            lease_until=None, claim_token=None, updated_at=now,
        )).scalar_one_or_none()
        if recorded is None and session.get(PostTarget, taken.target_id) is None:
            return "deleted"
        return "published"
    target = _locked_target(session, taken.target_id, joinedload(PostTarget.account))
    if target is None:
        return "deleted"
    if target.claim_token != taken.run_token or target.status != PUBLISHING:
        return "superseded"
    _record_failure(target, error, taken.attempt, settings, prefix="")
    if error.auth_failed:
        accounts.mark_needs_reauth(target.account, error.message)
    return "retrying" if target.status == PENDING else "failed"


# Why an account that is not active gets nothing: the user connects an account again
# and publishes again, which retries the failed targets through the active accounts.
_ACCOUNT_UNUSABLE = {
    accounts.DISABLED: (
        "account_disconnected", "The {platform} account {handle} was disconnected; connect an account on {platform} "
        "and publish the post again.",
    ),
    accounts.NEEDS_REAUTH: (
        "account_needs_reauth", "The {platform} account {handle} needs to be connected again (the platform refused "
        "its token); connect it again and publish the post again.",
    ),
}


def _connection(connector_for, taken: _Taken):
    """The connector and credentials a target's call goes through, or the PlatformError
    (final) that says why there are none."""
    account = taken.account
    if account.status != accounts.ACTIVE:
        code, message = _ACCOUNT_UNUSABLE[account.status]
        raise PlatformError(code, message.format(platform=account.platform, handle=account.handle), transient=False)
    try:
        connector = connector_for(account.connector)
    except ValueError as exc:
        raise PlatformError(
            "connector_unavailable", f"Account {account.handle} uses a connector this service lacks: {exc}.", transient=False
        ) from None
    try:
        credentials = accounts.credentials_for(account)
    except crypto.UndecryptableSecret:
        raise PlatformError(
            "account_credentials_unreadable",
            f"The credentials of account {account.handle} cannot be decrypted with the encryption keys this "
            "service runs with (SOCIALPUB_ENCRYPTION_KEYS); restore the key they were written with, or connect "
            "the account again.",
            transient=False,
        ) from None
    return connector, credentials


def _call_platform(ready, taken: _Taken) -> tuple[Published | None, PlatformError | None]:
    """The platform's receipt, or the error to record; never raises."""
    try:
        call = ready(taken)
    except PlatformError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - one target's bad data must not stop the slice
        logger.exception("could not prepare a platform call", extra={"target_id": str(taken.target_id)})
        return None, PlatformError(
            "call_preparation_failed", f"The call to {taken.platform} could not be prepared: {exc.__class__.__name__}.",
            transient=False,
        )
    try:
        return call(), None
    except PlatformError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - a connector bug must not lose the target
        logger.exception("connector failed unexpectedly", extra={"target_id": str(taken.target_id)})
        return None, PlatformError("internal_error", f"Unexpected connector failure: {exc.__class__.__name__}", transient=True)


def _queue_comment(target: PostTarget, now) -> None:
    if supports_replies(target.platform):
        target.comment_status = COMMENT_PENDING
        target.comment_next_attempt_at = now
        target.comment_attempts = 0


def _record_failure(target: PostTarget, error: PlatformError, attempt: int, settings, prefix: str) -> None:
    def put(name, value):
        setattr(target, prefix + name, value)

    put("error_code", error.code)
    put("error_message", error.message[:2000])
    put("lease_until", None)
    put("claim_token", None)
    if error.transient and attempt < settings.publish_max_attempts:
        put("status", PENDING)
        put("next_attempt_at", utcnow() + dt.timedelta(seconds=backoff_seconds(attempt, settings, error.retry_after)))
    else:
        put("status", FAILED)


def run_comment_slice(*, database, settings, connector_for, token, target_ids) -> dict[str, str]:
    """Posts the first comment under each target of a slice. Returns what happened to each."""

    def ready(taken: _Taken):
        connector, credentials = _connection(connector_for, taken)
        return lambda: connector.comment(
            credentials, parent=taken.parent, content=taken.content, idempotency_key=f"{taken.target_id}:comment"
        )

    return _run_slice(
        database=database, settings=settings, kind=COMMENT, token=token, target_ids=target_ids,
        take=_take_comment, ready=ready, record=_record_comment,
    )


def run_comment_job(*, database, settings, connector_for, target_id, token) -> str:
    outcomes = run_comment_slice(
        database=database, settings=settings, connector_for=connector_for, token=token, target_ids=[target_id]
    )
    return outcomes[str(uuid.UUID(str(target_id)))]


def _take_comment(session, target_id, token, settings, _prepared) -> _Taken | None:
    taken = _take(session, _TAKE_COMMENT, target_id, token, settings)
    if taken is None:
        return None
    run_token, attempt, post_id, account_id, platform, external_id, url, reference = taken
    found = _execute(session, _COMMENT_FOR_CALL, {"b_post_id": post_id, "b_account_id": account_id}).one()
    if found.content is None:
        # The comment was removed after it was claimed: nothing to post.
        session.execute(
            update(PostTarget).where(PostTarget.id == target_id).values(comment_status=None)
            .execution_options(synchronize_session=False)
        )
        return None
    parent = Published(external_id=external_id, url=url, reference=dict(reference or {}))
    return _Taken(target_id, run_token, attempt, post_id, platform, found, found.content, parent)


def _record_comment(session, taken: _Taken, receipt: Published | None, error: PlatformError | None, settings) -> str:
    target = _locked_target(session, taken.target_id)
    if target is None:
        return "deleted"
    if receipt is not None:
        if target.comment_status != COMMENT_POSTED:
            target.comment_status = COMMENT_POSTED
            target.comment_external_id, target.comment_url = receipt.external_id, receipt.url
            target.comment_posted_at = utcnow()
            target.comment_error_code = target.comment_error_message = None
            target.comment_lease_until = target.comment_claim_token = None
        return "posted"
    if target.comment_claim_token != taken.run_token or target.comment_status != COMMENT_POSTING:
        return "superseded"
    _record_failure(target, error, taken.attempt, settings, prefix="comment_")
    if error.auth_failed:
        accounts.mark_needs_reauth(target.account, error.message)
    return "retrying" if target.comment_status == COMMENT_PENDING else "failed"


# -- first comments -----------------------------------------------------------------

def _post_for_comment(session, principal, post_id, *, for_update: bool = True) -> tuple[TenantScope, Post]:
    """The post, locked for a change to its comment: settle_posts takes the same lock
    to queue the comment on targets as they publish."""
    scope = TenantScope.of(session, principal)
    return scope, scope.get(Post, post_id, resource="post", for_update=for_update)


def get_first_comment(*, session, principal, post_id) -> FirstComment:
    # Reading changes nothing: it must not wait for, nor hold up, a job settling the post.
    _, post = _post_for_comment(session, principal, post_id, for_update=False)
    if post.first_comment is None:
        raise ApiError(404, "resource_not_found", f"Post '{post_id}' has no first comment.")
    return post.first_comment


def set_first_comment(*, session, principal, post_id, content: str) -> FirstComment:
    from socialpub import platforms

    scope, post = _post_for_comment(session, principal, post_id)
    if content is None or not content.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    replying = [p for p in post.platforms if supports_replies(p)]
    if not replying:
        raise ApiError.field_invalid(
            "content", f"None of this post's platforms ({', '.join(post.platforms)}) supports replies."
        )
    platforms.check_length(content, replying, posted_on=", which it is posted on,")
    if any(t.comment_status in (COMMENT_POSTED, COMMENT_POSTING) for t in post.targets):
        raise ApiError.conflict("The first comment has already been posted; it can no longer be changed.")
    if post.first_comment is None:
        post.first_comment = FirstComment(workspace_id=post.workspace_id, livemode=post.livemode, content=content)
    else:
        post.first_comment.content = content
    now = utcnow()
    for target in post.targets:
        if target.status == PUBLISHED and target.comment_status is None:
            _queue_comment(target, now)
    session.commit()
    return post.first_comment


def delete_first_comment(*, session, principal, post_id) -> str:
    _, post = _post_for_comment(session, principal, post_id)
    comment = post.first_comment
    if comment is None:
        raise ApiError(404, "resource_not_found", f"Post '{post_id}' has no first comment.")
    identifier = str(comment.id)
    for target in post.targets:
        if target.comment_status in (COMMENT_PENDING, COMMENT_FAILED):
            target.comment_status = None
    post.first_comment = None
    session.commit()
    return identifier


def retry_first_comment(*, session, principal, post_id) -> FirstComment:
    _, post = _post_for_comment(session, principal, post_id)
    if post.first_comment is None:
        raise ApiError.conflict("The post has no first comment; there is nothing to retry.")
    failed = [t for t in post.targets if t.comment_status == COMMENT_FAILED]
    if not failed:
        raise ApiError.conflict("The first comment has not failed anywhere; there is nothing to retry.")
    now = utcnow()
    for target in failed:
        _queue_comment(target, now)
        target.comment_error_code = target.comment_error_message = None
    session.commit()
    return post.first_comment
