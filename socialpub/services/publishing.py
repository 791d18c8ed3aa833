"""The publishing pipeline: targets, publish now, the dispatcher's claims, and what a
job does with a claimed target or first comment.

The database is the truth. A scheduled post has one target per (platform, active
account). The dispatcher claims due targets in one statement (SKIP LOCKED on
PostgreSQL; SQLite serialises writers) by giving them a lease and a claim token,
then hands each to the queue. A job acts only while it holds the current token, calls
the platform with the target's id as idempotency key, and records the platform's
receipt before anything else. A job that runs twice, or after a crash, finds the
target published (or its token gone) and does nothing; a lease that runs out puts
the target back in the next dispatch.
"""
from __future__ import annotations

import datetime as dt
import logging
import random
import uuid

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import joinedload

from persistence.models import FirstComment, Post, PostTarget
from persistence.types import utcnow
from socialpub.connectors.base import PlatformError, Published
from socialpub.errors import ApiError
from socialpub.services import accounts, events
from socialpub.services.platforms import supports_replies
from socialpub.tenancy import TenantScope

logger = logging.getLogger("socialpub.publishing")

PENDING, PUBLISHING, PUBLISHED, FAILED = "pending", "publishing", "published", "failed"
COMMENT_PENDING, COMMENT_POSTING, COMMENT_POSTED, COMMENT_FAILED = "pending", "posting", "posted", "failed"


# -- targets of a post ------------------------------------------------------------

def guard_editable(post: Post) -> None:
    """A post that has gone out anywhere, or is going out now, cannot change."""
    if post.status == "published" or any(t.status == PUBLISHED for t in post.targets):
        raise ApiError.conflict("A published post cannot be edited.")
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
                    workspace_id=post.workspace_id, livemode=post.livemode, account_id=account_id,
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
    from socialpub.services import posts as post_service

    if post.status == "published":
        raise ApiError.conflict("The post is already published.")
    if any(t.status == PUBLISHING for t in post.targets):
        raise ApiError.conflict("The post is being published right now.")
    post_service.check_publishable(scope, post.content, list(post.platforms))
    post.status = "scheduled"
    post.scheduled_at = utcnow()
    sync_targets(scope, post)
    events.record_post_event(scope.session, post, "post.scheduled")


def settle_post(session, post: Post) -> None:
    """Derive the post's status from its targets, with an event when it changes."""
    targets = post.targets
    if not targets or post.status not in ("scheduled", "failed", "published"):
        return
    statuses = {t.status for t in targets}
    if statuses == {PUBLISHED}:
        new_status = "published"
    elif FAILED in statuses and not statuses & {PENDING, PUBLISHING}:
        new_status = "failed"
    else:
        new_status = "scheduled"
    if new_status != post.status:
        post.status = new_status
        if new_status == "published":
            post.published_at = max(t.published_at for t in targets if t.published_at)
        if new_status in ("published", "failed"):
            events.record_post_event(session, post, f"post.{new_status}")


# -- the dispatcher ---------------------------------------------------------------

def _claim(session, *, status_column, due_column, lease_column, token_column, pending, claimed, now, lease, limit):
    due = or_(
        and_(status_column == pending, due_column <= now),
        and_(status_column == claimed, lease_column < now),  # a lease that ran out
    )
    candidates = select(PostTarget.id).where(due).order_by(due_column).limit(limit)
    if session.bind.dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    # Lock the candidates first, then update exactly those. As a subquery of the
    # UPDATE, PostgreSQL may run `LIMIT ... SKIP LOCKED` again while rechecking rows a
    # concurrent claim changed, each run finding other rows: two dispatchers claiming
    # 500 each then take the whole table, and hold it for seconds.
    ids = list(session.execute(candidates).scalars())
    if not ids:
        return []
    token = str(uuid.uuid4())
    statement = (
        update(PostTarget)
        .where(PostTarget.id.in_(ids), due)
        .values({status_column: claimed, lease_column: now + lease, token_column: token})
        .returning(PostTarget.id)
        .execution_options(synchronize_session=False)
    )
    return [(target_id, token) for target_id in session.execute(statement).scalars()]


def claim_due(session, *, now=None, lease_seconds=120, limit=500) -> tuple[list, list]:
    """Claims due targets and due first comments. Returns (targets, comments), each a
    list of (target id, claim token)."""
    now = now or utcnow()
    lease = dt.timedelta(seconds=lease_seconds)
    targets = _claim(
        session, status_column=PostTarget.status, due_column=PostTarget.next_attempt_at,
        lease_column=PostTarget.lease_until, token_column=PostTarget.claim_token,
        pending=PENDING, claimed=PUBLISHING, now=now, lease=lease, limit=limit,
    )
    comments = _claim(
        session, status_column=PostTarget.comment_status, due_column=PostTarget.comment_next_attempt_at,
        lease_column=PostTarget.comment_lease_until, token_column=PostTarget.comment_claim_token,
        pending=COMMENT_PENDING, claimed=COMMENT_POSTING, now=now, lease=lease, limit=limit,
    )
    session.commit()
    return targets, comments


# A job's id names what it works on and the claim it holds: "<kind>-<target id>-<token>".
def _job_id(kind: str, target_id, token: str) -> str:
    return f"{kind}-{target_id}-{token}"


_JOB_KINDS = {
    "publish": (PostTarget.status, PUBLISHING, PostTarget.lease_until, PostTarget.claim_token),
    "comment": (PostTarget.comment_status, COMMENT_POSTING, PostTarget.comment_lease_until, PostTarget.comment_claim_token),
}


def renew_waiting_claims(session, job_ids, *, now, lease: dt.timedelta) -> int:
    """Renews the lease of each claim whose job is still waiting in the queue, once
    half of it has passed. A lease is there to recover a job that started and died, or
    a claim the queue lost; a claim that is merely waiting its turn keeps it, rather
    than being handed out again (its first job then finding the token gone)."""
    waiting = {job_id for job_id in job_ids if job_id}
    renewed = 0
    for kind, (status_column, claimed, lease_column, token_column) in _JOB_KINDS.items():
        renewable = and_(status_column == claimed, lease_column < now + lease / 2)
        # Usually none: only claims older than half a lease.
        rows = session.execute(select(PostTarget.id, token_column).where(renewable)).all()
        claims = {(target_id, token) for target_id, token in rows if _job_id(kind, target_id, token) in waiting}
        if not claims:
            continue
        query = select(PostTarget.id, token_column).where(PostTarget.id.in_([target_id for target_id, _ in claims]), renewable)
        if session.bind.dialect.name == "postgresql":
            # A row a job or the other dispatcher holds is left alone: never wait, never deadlock.
            query = query.with_for_update(skip_locked=True)
        ids = [target_id for target_id, token in session.execute(query).all() if (target_id, token) in claims]
        if ids:
            session.execute(
                update(PostTarget).where(PostTarget.id.in_(ids), renewable).values({lease_column: now + lease})
                .execution_options(synchronize_session=False)
            )
            renewed += len(ids)
    return renewed


def dispatch_due(*, database, queue, settings, now=None) -> int:
    """One dispatch: claim what is due and hand each piece to the queue.

    The queue is only topped up to dispatch_batch_size waiting jobs, so a burst of due
    posts waits in the database, not in the queue, and claims whose jobs are still
    waiting keep their leases. A queue that cannot be reached claims nothing, and
    claims it refuses are given back at once rather than when their leases run out."""
    now = now or utcnow()
    waiting = queue.waiting_job_ids()
    room = settings.dispatch_batch_size - len(waiting)
    with database.transaction() as session:
        renew_waiting_claims(session, waiting, now=now, lease=dt.timedelta(seconds=settings.publish_lease_seconds))
        if room <= 0:
            return 0
        targets, comments = claim_due(
            session, now=now, lease_seconds=settings.publish_lease_seconds, limit=room
        )
    work = [("publish", "workers.jobs.publish_target", target_id, token) for target_id, token in targets]
    work += [("comment", "workers.jobs.post_first_comment", target_id, token) for target_id, token in comments]
    for index, (kind, function_path, target_id, token) in enumerate(work):
        try:
            queue.enqueue(function_path, str(target_id), token, job_id=_job_id(kind, target_id, token))
        except Exception:
            _release_claims(database, work[index:])
            raise
    return len(work)


def _release_claims(database, work) -> None:
    """Puts claims that never reached the queue back to pending, due as before."""
    try:
        with database.transaction() as session:
            for kind, pending in (("publish", PENDING), ("comment", COMMENT_PENDING)):
                status_column, claimed, lease_column, token_column = _JOB_KINDS[kind]
                claims = [(target_id, token) for job_kind, _, target_id, token in work if job_kind == kind]
                if claims:
                    session.execute(
                        update(PostTarget)
                        .where(PostTarget.id.in_([target_id for target_id, _ in claims]), status_column == claimed,
                               token_column.in_({token for _, token in claims}))
                        .values({status_column: pending, lease_column: None, token_column: None})
                        .execution_options(synchronize_session=False)
                    )
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


def run_publish_job(*, database, settings, connector_for, target_id, token) -> str:
    """Publishes one claimed target. Returns what happened, for logs and tests."""
    with database.transaction() as session:
        target = _locked_target(session, target_id, joinedload(PostTarget.post), joinedload(PostTarget.account))
        if target is None or target.status != PUBLISHING or target.claim_token != token:
            return "skipped"
        # Take the claim for this run: a duplicate of this job now finds no token.
        run_token = str(uuid.uuid4())
        target.claim_token = run_token
        target.attempts += 1
        target.lease_until = utcnow() + dt.timedelta(seconds=settings.publish_lease_seconds)
        account = target.account
        credentials = accounts.credentials_for(account)
        connector_name, content, attempt = account.connector, target.post.content, target.attempts
    receipt, error = _call_platform(
        lambda: connector_for(connector_name).publish(credentials, content, idempotency_key=str(target_id)), target_id
    )

    with database.transaction() as session:
        # With what recording the outcome reads: the post, its targets (to settle it)
        # and its first comment, in two queries rather than one each.
        post = joinedload(PostTarget.post)
        target = _locked_target(session, target_id, post.joinedload(Post.first_comment), post.selectinload(Post.targets))
        if target is None:
            return "deleted"
        if receipt is not None:
            if target.status != PUBLISHED:
                _record_published(target, receipt)
                settle_post(session, target.post)
            return "published"
        if target.claim_token != run_token or target.status != PUBLISHING:
            return "superseded"
        _record_failure(target, error, attempt, settings, prefix="")
        if error.auth_failed:
            accounts.mark_needs_reauth(target.account, error.message)
        settle_post(session, target.post)
        return "retrying" if target.status == PENDING else "failed"


def _call_platform(call, target_id) -> tuple[Published | None, PlatformError | None]:
    """The platform's receipt, or the error to record; never raises."""
    try:
        return call(), None
    except PlatformError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - a connector bug must not lose the target
        logger.exception("connector failed unexpectedly", extra={"target_id": str(target_id)})
        return None, PlatformError("internal_error", f"Unexpected connector failure: {exc.__class__.__name__}", transient=True)


def _record_published(target: PostTarget, receipt: Published) -> None:
    now = utcnow()
    target.status = PUBLISHED
    target.external_id, target.url, target.reference = receipt.external_id, receipt.url, dict(receipt.reference or {})
    target.published_at = now
    target.error_code = target.error_message = None
    target.lease_until = target.claim_token = None
    if target.post.first_comment is not None:
        _queue_comment(target, now)


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


def run_comment_job(*, database, settings, connector_for, target_id, token) -> str:
    with database.transaction() as session:
        target = _locked_target(session, target_id)
        if target is None or target.comment_status != COMMENT_POSTING or target.comment_claim_token != token:
            return "skipped"
        comment = target.post.first_comment
        if comment is None:
            target.comment_status = None
            return "skipped"
        run_token = str(uuid.uuid4())
        target.comment_claim_token = run_token
        target.comment_attempts += 1
        target.comment_lease_until = utcnow() + dt.timedelta(seconds=settings.publish_lease_seconds)
        credentials = accounts.credentials_for(target.account)
        connector_name, attempt = target.account.connector, target.comment_attempts
        parent = Published(external_id=target.external_id, url=target.url, reference=dict(target.reference or {}))
        content = comment.content
    receipt, error = _call_platform(
        lambda: connector_for(connector_name).comment(
            credentials, parent=parent, content=content, idempotency_key=f"{target_id}:comment"
        ),
        target_id,
    )

    with database.transaction() as session:
        target = _locked_target(session, target_id)
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
        if target.comment_claim_token != run_token or target.comment_status != COMMENT_POSTING:
            return "superseded"
        _record_failure(target, error, attempt, settings, prefix="comment_")
        if error.auth_failed:
            accounts.mark_needs_reauth(target.account, error.message)
        return "retrying" if target.comment_status == COMMENT_PENDING else "failed"


# -- first comments -----------------------------------------------------------------

def _post_for_comment(session, principal, post_id) -> tuple[TenantScope, Post]:
    scope = TenantScope.of(session, principal)
    return scope, scope.get(Post, post_id, resource="post", for_update=True)


def get_first_comment(*, session, principal, post_id) -> FirstComment:
    _, post = _post_for_comment(session, principal, post_id)
    if post.first_comment is None:
        raise ApiError(404, "resource_not_found", f"Post '{post_id}' has no first comment.")
    return post.first_comment


def set_first_comment(*, session, principal, post_id, content: str) -> FirstComment:
    from socialpub.services import platforms

    scope, post = _post_for_comment(session, principal, post_id)
    if content is None or not content.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    replying = [p for p in post.platforms if supports_replies(p)]
    if not replying:
        raise ApiError.field_invalid(
            "content", f"None of this post's platforms ({', '.join(post.platforms)}) supports replies."
        )
    platform, limit = platforms.strictest(replying)
    if platforms.content_length(content) > limit:
        raise ApiError.field_invalid("content", f"content is too long for {platform}, which allows {limit} characters.")
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


def first_comment_status(comment: FirstComment) -> str:
    states = [t.comment_status for t in comment.post.targets if t.comment_status]
    if COMMENT_FAILED in states:
        return "failed"
    replying = [t for t in comment.post.targets if supports_replies(t.platform)]
    if replying and all(t.comment_status == COMMENT_POSTED for t in replying):
        return "posted"
    return "pending"
