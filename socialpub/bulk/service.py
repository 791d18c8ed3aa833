"""Bulk operations: one action over up to 500 posts, run by workers in chunks.

The request only records the operation (its posts in one row), then hands it to the
queue. A run takes the operation with a lease and a token (as publishing jobs take
their targets) and applies the next chunk of posts in one transaction: the effects
on the posts, the refused items' errors and the advance of `processed` commit
together, so a worker killed mid-chunk leaves that chunk untouched, and the run that
takes over after the lease applies it exactly once. A run takes the operation in a
transaction of its own, counted, before applying anything, so a chunk that fails
every time ends the operation `failed` after bulk_max_runs takeovers. Cancelling
changes the operation's status under the same row lock a chunk holds: it takes
effect at the next chunk boundary, never inside a chunk.
"""
from __future__ import annotations

import datetime as dt
import logging
import time
import uuid

from sqlalchemy import or_, select, update
from sqlalchemy.orm import joinedload, selectinload, undefer

from persistence.bulk import BulkItemError, BulkOperation
from persistence.posts import Post
from persistence.types import utcnow
from socialpub.envelope import Page
from socialpub.bulk.schemas import BulkOperationSchema
from socialpub.errors import ApiError
from socialpub.events import service as events
from socialpub.publishing import service as publishing
from socialpub.posts import service as post_service
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.bulk")

ACTIONS = ("schedule", "reschedule", "publish", "delete", "archive")
TIMED_ACTIONS = ("schedule", "reschedule")
PENDING, RUNNING, COMPLETED, CANCELLED, FAILED = "pending", "running", "completed", "cancelled", "failed"
STATUSES = (PENDING, RUNNING, COMPLETED, CANCELLED, FAILED)
FINISHED = (COMPLETED, CANCELLED, FAILED)
MAX_POSTS = 500

_JOB = "workers.jobs.run_bulk_operation"
# SQLite has no row locks: a cancel waits for the database's write lock, polling for
# it at most every 100 ms, while a run that began its next chunk at once would take
# the lock back within microseconds, every time, until the operation ended. A run
# there leaves the lock free a little longer than one poll between chunks.
SQLITE_HANDOVER_SECONDS = 0.11


# -- the request ------------------------------------------------------------------

def _entries(action, post_ids, scheduled_at, items) -> list[tuple[str, dt.datetime | None]]:
    """The (post id, time) pairs of a request, or 422 naming what is wrong with it."""
    if action not in ACTIONS:
        raise ApiError.field_invalid("action", f"action must be one of {', '.join(ACTIONS)}.")
    timed = action in TIMED_ACTIONS
    if post_ids is not None and items is not None:
        raise ApiError.field_invalid("items", "Give either postIds or items, not both.")
    if items is not None:
        if not timed:
            raise ApiError.field_invalid("items", f"items carry times, for schedule and reschedule; {action} takes postIds.")
        if scheduled_at is not None:
            raise ApiError.field_invalid("scheduledAt", "With items, each item carries its own scheduledAt.")
        entries = [(item["post_id"], item["scheduled_at"]) for item in items]
    elif post_ids is not None:
        if timed and scheduled_at is None:
            raise ApiError.field_invalid("scheduledAt", f"{action} needs scheduledAt (or items with a time each).")
        if not timed and scheduled_at is not None:
            raise ApiError.field_invalid("scheduledAt", f"scheduledAt is for schedule and reschedule, not {action}.")
        entries = [(post_id, scheduled_at) for post_id in post_ids]
    else:
        raise ApiError.field_invalid("postIds", "Name the posts: postIds, or items for schedule and reschedule.")
    field = "items" if items is not None else "postIds"
    if not entries:
        raise ApiError.field_invalid(field, "Name at least one post.")
    if len(entries) > MAX_POSTS:
        raise ApiError.field_invalid(field, f"At most {MAX_POSTS} posts per bulk operation; got {len(entries)}.")
    # Ids are read leniently (any case, with or without hyphens or braces), so two
    # spellings of one UUID name the same post: compared as sent, it would be acted
    # on twice. An id that is no UUID names no post; it is compared as sent and
    # reported as an item error when the operation runs.
    seen: dict = {}
    for index, (post_id, _) in enumerate(entries):
        parsed = parse_id(post_id)
        identity = parsed if parsed is not None else post_id
        if identity in seen:
            first = seen[identity]
            spelled = "" if entries[first][0] == post_id else f" (as '{entries[first][0]}')"
            raise ApiError.field_invalid(
                _id_field(items, index),
                f"Post '{post_id}' is named more than once: {_id_field(items, first)} names it too{spelled}.",
            )
        seen[identity] = index
    now = utcnow()
    for index, (_, when) in enumerate(entries):
        if when is not None and when <= now:
            name = f"items[{index}].scheduledAt" if items is not None else "scheduledAt"
            raise ApiError.field_invalid(name, "scheduledAt must be in the future.")
    return entries


def _id_field(items, index: int) -> str:
    return f"items[{index}].postId" if items is not None else f"postIds[{index}]"


def create_operation(*, session, principal, queue, settings, action, post_ids=None, scheduled_at=None, items=None) -> BulkOperation:
    scope = TenantScope.of(session, principal)
    entries = _entries(action, post_ids, scheduled_at, items)
    operation = scope.add(
        BulkOperation(
            action=action, status=PENDING, total=len(entries), processed=0, succeeded=0, failed=0, runs=0,
            entries=[[post_id, when.isoformat() if when else None] for post_id, when in entries],
            # The run just queued has this long to start before the sweeper queues another.
            lease_until=utcnow() + dt.timedelta(seconds=settings.bulk_lease_seconds),
            # Known: nothing has been refused yet, so showing it reads nothing back.
            item_errors=[],
        )
    )
    session.commit()
    hand_to_queue(session, queue, operation.id)
    return operation


def hand_to_queue(session, queue, operation_id) -> bool:
    """Queues a run of the operation. A queue that cannot be reached leaves the
    operation to the sweeper, which queues it as soon as the queue is back."""
    try:
        queue.enqueue(_JOB, str(operation_id))
        return True
    except Exception:  # noqa: BLE001 - the operation is stored; the sweeper retries
        logger.warning("could not queue bulk operation; the sweeper will", exc_info=True,
                       extra={"operation_id": str(operation_id)})
        try:
            session.execute(update(BulkOperation).where(BulkOperation.id == operation_id).values(lease_until=None))
            session.commit()
        except Exception:  # noqa: BLE001 - then its lease brings it back
            session.rollback()
        return False


def list_operations(*, session, principal, status=None, limit=20, offset=0) -> Page:
    scope = TenantScope.of(session, principal)
    criteria = []
    if status is not None:
        if status not in STATUSES:
            raise ApiError.field_invalid("query.status", f"status must be one of {', '.join(STATUSES)}.")
        criteria.append(BulkOperation.status == status)
    query = (
        scope.select(BulkOperation, *criteria)
        .options(selectinload(BulkOperation.item_errors))
        .order_by(BulkOperation.created_at.desc(), BulkOperation.id.desc())
        .limit(limit)
        .offset(offset)
    )
    items = list(session.execute(query).scalars())
    total = len(items) if offset == 0 and len(items) < limit else scope.count(BulkOperation, *criteria)
    return Page(items=items, total=total, limit=limit, offset=offset)


def get_operation(*, session, principal, operation_id) -> BulkOperation:
    return TenantScope.of(session, principal).get(
        BulkOperation, operation_id, resource="bulk operation", options=(selectinload(BulkOperation.item_errors),)
    )


def cancel_operation(*, session, principal, operation_id) -> BulkOperation:
    """Waits for a chunk being applied to commit (the row lock), so the answer's
    counts are final: nothing more happens after it."""
    scope = TenantScope.of(session, principal)
    operation = scope.get(BulkOperation, operation_id, resource="bulk operation", for_update=True)
    if operation.status in FINISHED:
        raise ApiError.conflict(f"The bulk operation has already {_finished_verb(operation.status)}; it cannot be cancelled.")
    now = utcnow()
    operation.status = CANCELLED
    operation.cancel_requested_at = now
    operation.completed_at = now
    operation.lease_until = operation.claim_token = None
    _record_finished(session, operation)
    session.commit()
    return operation


def _finished_verb(status: str) -> str:
    return {COMPLETED: "completed", CANCELLED: "been cancelled", FAILED: "failed"}[status]


def _record_finished(session, operation: BulkOperation) -> None:
    events.record(
        session, workspace_id=operation.workspace_id, livemode=operation.livemode, type="bulk.completed",
        data={"bulkOperation": BulkOperationSchema().dump(operation)},
    )


# -- a run ------------------------------------------------------------------------

def run_operation(*, database, settings, operation_id) -> str:
    """Applies the operation chunk by chunk until it is finished, cancelled, or held
    by another live run. Returns what happened, for logs and tests."""
    token = str(uuid.uuid4())
    handover = SQLITE_HANDOVER_SECONDS if database.dialect == "sqlite" else 0.0
    while True:
        outcome = run_chunk(database=database, settings=settings, operation_id=operation_id, token=token)
        if outcome != "continue":
            return outcome
        if handover:
            time.sleep(handover)


def run_chunk(*, database, settings, operation_id, token) -> str:
    """Applies the operation's next chunk for the run holding `token`, taking the
    operation first if this run does not hold it yet."""
    with database.transaction() as session:
        operation, ended = _open(session, operation_id)
        if ended:
            return ended
        if operation.claim_token == token:
            return _advance(session, settings, operation)
        refused = _claim(session, settings, operation, token)
    if refused is not None:
        return refused
    # The claim, and the run it counted, committed on their own before any of the
    # chunk's work: a chunk that raises or kills its worker every time rolls back
    # only itself, so each attempt at it is counted and bulk_max_runs ends it.
    with database.transaction() as session:
        operation, ended = _open(session, operation_id)
        if ended:
            return ended
        if operation.claim_token != token:
            return "busy"
        return _advance(session, settings, operation)


def _open(session, operation_id) -> tuple[BulkOperation | None, str | None]:
    """The operation, locked, or what ends the run instead (missing or finished)."""
    operation = _locked_operation(session, operation_id)
    if operation is None:
        return None, "missing"
    if operation.status in FINISHED:
        return None, operation.status
    return operation, None


def _claim(session, settings, operation: BulkOperation, token: str) -> str | None:
    """Gives the operation to this run, or says why not (None: claimed)."""
    now = utcnow()
    if operation.claim_token is not None:
        if operation.lease_until is not None and operation.lease_until > now:
            return "busy"  # another run holds it
        # The run that held it was lost (died, or raised out of a chunk) and the
        # sweeper has not counted it yet.
        operation.runs += 1
    if operation.runs > settings.bulk_max_runs:
        _fail_remaining(session, operation, now)
        return FAILED
    if operation.status == PENDING:
        operation.status, operation.started_at = RUNNING, now
    operation.claim_token = token
    operation.lease_until = now + dt.timedelta(seconds=settings.bulk_lease_seconds)
    return None


def _advance(session, settings, operation: BulkOperation) -> str:
    """The next chunk's effects and progress, in the caller's transaction."""
    now = utcnow()
    operation.lease_until = now + dt.timedelta(seconds=settings.bulk_lease_seconds)
    chunk = operation.entries[operation.processed:operation.processed + settings.bulk_chunk_size]
    if not chunk:
        _complete(session, operation, now)
        return COMPLETED
    _apply(session, operation, chunk)
    if operation.processed >= operation.total:
        # Finished with its last chunk, so a cancel cannot fall between the two.
        _complete(session, operation, now)
        return COMPLETED
    return "continue"


def _complete(session, operation: BulkOperation, now) -> None:
    operation.status, operation.completed_at = COMPLETED, now
    operation.lease_until = operation.claim_token = None
    _record_finished(session, operation)


def _locked_operation(session, operation_id) -> BulkOperation | None:
    parsed = parse_id(operation_id)
    if parsed is None:
        return None
    query = select(BulkOperation).where(BulkOperation.id == parsed).options(
        undefer(BulkOperation.entries), selectinload(BulkOperation.item_errors)
    )
    if session.bind.dialect.name == "postgresql":
        query = query.with_for_update()
    return session.execute(query).scalar_one_or_none()


def _apply(session, operation: BulkOperation, chunk: list) -> None:
    scope = TenantScope(session, operation.workspace_id, operation.livemode)
    wanted = [parse_id(post_id) for post_id, _ in chunk]
    ids = [post_id for post_id in wanted if post_id is not None]
    posts = {}
    if ids:
        query = scope.select(Post, Post.id.in_(ids)).options(selectinload(Post.targets), joinedload(Post.first_comment))
        if session.bind.dialect.name == "postgresql":
            query = query.with_for_update(of=Post)
        posts = {post.id: post for post in session.execute(query).unique().scalars()}
    effect = _EFFECTS[operation.action]
    for (post_id, when), parsed in zip(chunk, wanted):
        position = operation.processed
        operation.processed += 1
        post = posts.get(parsed)
        if post is None:
            _refused(operation, position, post_id, "resource_not_found", f"Post '{post_id}' was not found.")
            continue
        try:
            # The single-post rules, which raise before they change anything: a
            # refused item leaves its post as it was. (Not a savepoint each: that
            # would flush every item on its own, several times the cost of the chunk.)
            effect(scope, post, dt.datetime.fromisoformat(when) if when else None)
        except ApiError as exc:
            _refused(operation, position, post_id, exc.code, exc.message)
        else:
            operation.succeeded += 1


def _refused(operation: BulkOperation, position: int, post_id: str, code: str, message: str) -> None:
    operation.item_errors.append(
        BulkItemError(operation_id=operation.id, position=position, post_id=post_id, code=code, message=message[:2000])
    )
    operation.failed += 1


def _fail_remaining(session, operation: BulkOperation, now) -> None:
    """An operation whose runs keep dying is given up: its remaining posts are
    refused, so the caller knows exactly which were not acted on."""
    logger.error("bulk operation failed after repeated lost runs",
                 extra={"operation_id": str(operation.id), "runs": operation.runs, "processed": operation.processed})
    message = (
        f"The operation was stopped after {operation.runs} runs failed or died at post {operation.processed + 1} "
        f"of {operation.total}; nothing was done to this post."
    )
    for position in range(operation.processed, operation.total):
        post_id = operation.entries[position][0]
        _refused(operation, position, post_id, "internal_error", message)
    operation.processed = operation.total
    operation.status, operation.completed_at = FAILED, now
    operation.lease_until = operation.claim_token = None
    _record_finished(session, operation)


def _schedule(scope, post, scheduled_at):
    post_service.schedule_post(scope, post, scheduled_at)


def _reschedule(scope, post, scheduled_at):
    post_service.reschedule_post(scope, post, scheduled_at)


def _publish(scope, post, _):
    publishing.start_publishing(scope, post)


def _delete(scope, post, _):
    post_service.remove_post(scope, post)


def _archive(scope, post, _):
    post_service.archive_post(scope, post)


_EFFECTS = {"schedule": _schedule, "reschedule": _reschedule, "publish": _publish, "delete": _delete, "archive": _archive}


# -- the sweeper ------------------------------------------------------------------

def resume_stalled(*, database, queue, settings, now=None) -> int:
    """Queues a run for every unfinished operation whose lease ran out (its worker
    died, or the queue lost or never got its job), renewing the lease so it is
    queued once per lease rather than once per sweep."""
    now = now or utcnow()
    with database.transaction() as session:
        query = (
            select(BulkOperation.id)
            .where(BulkOperation.status.in_((PENDING, RUNNING)),
                   or_(BulkOperation.lease_until.is_(None), BulkOperation.lease_until < now))
            .limit(100)
        )
        if session.bind.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        stalled = list(session.execute(query).scalars())
        if not stalled:
            return 0
        lease_until = now + dt.timedelta(seconds=settings.bulk_lease_seconds)
        # A run that held the operation and let its lease run out (it died, raised out
        # of a chunk, or went quiet) is counted as lost, and the operation freed for
        # the run queued now. A run in the middle of a chunk is not seen here: on
        # PostgreSQL it holds the row lock this skips, on SQLite the write lock. A run
        # that went quiet and comes back finds its token gone at its next chunk: if
        # the new run holds the operation it stops ("busy"); if the new run has not
        # started, it takes the operation back and the new run stops instead.
        session.execute(
            update(BulkOperation).where(BulkOperation.id.in_(stalled), BulkOperation.claim_token.is_not(None))
            .values(lease_until=lease_until, claim_token=None, runs=BulkOperation.runs + 1)
            .execution_options(synchronize_session=False)
        )
        session.execute(
            update(BulkOperation).where(BulkOperation.id.in_(stalled), BulkOperation.claim_token.is_(None))
            .values(lease_until=lease_until)
            .execution_options(synchronize_session=False)
        )
    for operation_id in stalled:
        queue.enqueue(_JOB, str(operation_id))
    return len(stalled)
