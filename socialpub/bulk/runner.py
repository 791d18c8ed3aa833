"""A bulk operation's run: the worker side of a bulk operation (the request side is
`socialpub.bulk.service`).

A run takes the operation with a lease and a token (as publishing jobs take their
targets) and applies the next chunk of posts in one transaction: the effects on the
posts, the refused items' errors and the advance of `processed` commit together, so
a worker killed mid-chunk leaves that chunk untouched, and the run that takes over
after the lease applies it exactly once. A run takes the operation in a transaction
of its own, counted, before applying anything, so a chunk that fails every time
ends the operation `failed` after bulk_max_runs takeovers.

Cancelling changes the operation's status under the same lock a chunk holds: it
takes effect at the next chunk boundary, never inside a chunk. Between chunks a run
holds no lock, and lets a cancel waiting for the operation go first (`cancels`).

Nothing here enqueues by name: the sweeper is given the job to queue (`run=`), so
this module never imports the jobs that call it.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
import uuid
from contextlib import contextmanager

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import joinedload, selectinload, undefer

from persistence.bulk import FINISHED_STATUSES, BulkItemError, BulkOperation, BulkStatus
from persistence.posts import Post
from socialpub import claims, clock
from socialpub.bulk.schemas import BulkOperationSchema
from socialpub.errors import ApiError
from socialpub.events import service as events
from socialpub.posts import service as post_service
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.bulk")

CONTINUE = "continue"
# Operations the sweeper queues per pass; the rest wait for the next pass.
SWEEP_BATCH = 100


# -- handing the operation to a cancel ------------------------------------------------

class CancelsWaiting:
    """The cancels of this process waiting for an operation's lock, so that a run
    lets them go first at its next chunk boundary.

    A run that began its next chunk the moment the previous one committed would take
    the lock straight back, every time: SQLite has no queue for its write lock (a
    waiting writer polls for it, every 100 ms at most), so a cancel there would wait
    until the operation had finished. PostgreSQL queues row-lock waiters in order,
    so there this only saves the run a chunk it would be cancelled after anyway.
    The embedded default (SQLite) runs its jobs in the API's own process; with
    separate worker processes the database is PostgreSQL."""

    def __init__(self):
        self._waiting: dict[uuid.UUID, int] = {}
        self._changed = threading.Condition()

    @contextmanager
    def waiting(self, operation_id):
        """Marks a cancel of `operation_id` as waiting while the block runs (up to
        its commit)."""
        parsed = parse_id(operation_id)
        if parsed is None:  # names no operation: nothing to wait for
            yield
            return
        with self._changed:
            self._waiting[parsed] = self._waiting.get(parsed, 0) + 1
        try:
            yield
        finally:
            with self._changed:
                remaining = self._waiting.pop(parsed) - 1
                if remaining:
                    self._waiting[parsed] = remaining
                self._changed.notify_all()

    def is_waiting(self, operation_id) -> bool:
        with self._changed:
            return parse_id(operation_id) in self._waiting

    def let_through(self, operation_id, *, timeout: float) -> None:
        """Returns once no cancel of `operation_id` is waiting, or after `timeout`
        seconds."""
        parsed = parse_id(operation_id)
        with self._changed:
            self._changed.wait_for(lambda: parsed not in self._waiting, timeout=timeout)


cancels = CancelsWaiting()


# -- a run ------------------------------------------------------------------------

def run_operation(*, database, settings, operation_id) -> str:
    """Applies the operation chunk by chunk until it is finished, cancelled, or held
    by another live run. Returns what happened, for logs and tests."""
    token = str(uuid.uuid4())
    while True:
        try:
            outcome = run_chunk(database=database, settings=settings, operation_id=operation_id, token=token)
        except Exception:  # noqa: BLE001 - one post must not stop the others
            # The chunk rolled back whole, so nothing of it was applied: apply it again
            # a post at a time, so that the post that raises is refused on its own and
            # the rest go on. What raises again (the database gone) ends the run, and
            # the sweeper takes it up after the lease, counting it.
            logger.exception("bulk chunk failed; applying it a post at a time", extra={"operation_id": operation_id})
            outcome = run_chunk(
                database=database, settings=settings, operation_id=operation_id, token=token, post_by_post=True
            )
        if outcome != CONTINUE:
            return outcome
        # Never as long as the lease this run holds (renewed with each chunk).
        cancels.let_through(operation_id, timeout=settings.bulk_lease_seconds / 2)


def run_chunk(*, database, settings, operation_id, token, post_by_post=False) -> str:
    """Applies the operation's next chunk for the run holding `token`, taking the
    operation first if this run does not hold it yet. `post_by_post` applies each post
    behind a savepoint of its own, refusing a post that raises with `internal_error`."""
    with database.transaction() as session:
        operation, ended = _open(session, operation_id)
        if ended:
            return ended
        if operation.claim_token == token:
            return _advance(session, settings, operation, post_by_post)
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
        return _advance(session, settings, operation, post_by_post)


def _open(session, operation_id) -> tuple[BulkOperation | None, str | None]:
    """The operation, locked, or what ends the run instead (missing or finished)."""
    operation = _locked_operation(session, operation_id)
    if operation is None:
        return None, "missing"
    if operation.status in FINISHED_STATUSES:
        return None, operation.status
    return operation, None


def _locked_operation(session, operation_id) -> BulkOperation | None:
    parsed = parse_id(operation_id)
    if parsed is None:
        return None
    query = select(BulkOperation).where(BulkOperation.id == parsed).options(
        undefer(BulkOperation.entries), selectinload(BulkOperation.item_errors)
    )
    return session.execute(claims.lock_rows(session, query)).scalar_one_or_none()


def _claim(session, settings, operation: BulkOperation, token: str) -> str | None:
    """Gives the operation to this run, or says why not (None: claimed)."""
    now = clock.now()
    if operation.claim_token is not None:
        if operation.lease_until is not None and operation.lease_until > now:
            return "busy"  # another run holds it
        # The run that held it was lost (died, or raised out of a chunk) and the
        # sweeper has not counted it yet.
        operation.runs += 1
    if operation.runs > settings.bulk_max_runs:
        fail(session, operation, now)
        return BulkStatus.FAILED
    if operation.status == BulkStatus.PENDING:
        operation.status, operation.started_at = BulkStatus.RUNNING, now
    operation.claim_token = token
    operation.lease_until = now + dt.timedelta(seconds=settings.bulk_lease_seconds)
    return None


def _advance(session, settings, operation: BulkOperation, post_by_post: bool = False) -> str:
    """The next chunk's effects and progress, in the caller's transaction."""
    now = clock.now()
    operation.lease_until = now + dt.timedelta(seconds=settings.bulk_lease_seconds)
    chunk = operation.entries[operation.processed:operation.processed + settings.bulk_chunk_size]
    if not chunk:
        _complete(session, operation, now)
        return BulkStatus.COMPLETED
    if post_by_post:
        _apply_post_by_post(session, operation, chunk)
    else:
        apply(session, operation, chunk)
    if operation.processed >= operation.total:
        # Finished with its last chunk, so a cancel cannot fall between the two.
        _complete(session, operation, now)
        return BulkStatus.COMPLETED
    return CONTINUE


def _complete(session, operation: BulkOperation, now) -> None:
    operation.status, operation.completed_at = BulkStatus.COMPLETED, now
    operation.lease_until = operation.claim_token = None
    record_finished(session, operation)


def record_finished(session, operation: BulkOperation) -> None:
    """The bulk.completed event of an operation that reached a final state, in the
    transaction that put it there."""
    events.record(
        session, workspace_id=operation.workspace_id, livemode=operation.livemode, type="bulk.completed",
        data={"bulkOperation": BulkOperationSchema().dump(operation)},
    )


def apply(session, operation: BulkOperation, chunk: list) -> None:
    """Applies one chunk's posts (or refuses them), advancing `processed`."""
    scope = TenantScope.for_job(session, operation.workspace_id, operation.livemode, job=f"bulk {operation.id}")
    wanted = [parse_id(post_id) for post_id, _ in chunk]
    ids = [post_id for post_id in wanted if post_id is not None]
    posts = {}
    if ids:
        query = scope.select(Post, Post.id.in_(ids)).options(selectinload(Post.targets), joinedload(Post.first_comment))
        posts = {post.id: post for post in session.execute(claims.lock_rows(session, query, of=Post)).unique().scalars()}
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


def _apply_post_by_post(session, operation: BulkOperation, chunk: list) -> None:
    """Applies a chunk that raised, each post behind a savepoint: the post that raises
    is refused with `internal_error` (its savepoint undoing whatever it had begun), and
    the others are applied as usual."""
    for entry in chunk:
        try:
            with session.begin_nested():
                apply(session, operation, [entry])
        except Exception as exc:  # noqa: BLE001 - recorded on the post, the rest go on
            logger.exception("bulk item failed unexpectedly", extra={"operation_id": str(operation.id)})
            position = operation.processed
            operation.processed += 1
            _refused(operation, position, entry[0], "internal_error", (
                f"This post could not be acted on: an unexpected error ({exc.__class__.__name__}) stopped it; "
                "nothing was done to it."
            ))


def _refused(operation: BulkOperation, position: int, post_id: str, code: str, message: str) -> None:
    operation.item_errors.append(
        BulkItemError(
            operation_id=operation.id, position=position, post_id=post_id[:100], code=code, message=message[:2000]
        )
    )
    operation.failed += 1


def fail(session, operation: BulkOperation, now) -> None:
    """Gives up an operation whose runs keep dying: its remaining posts are refused,
    so the caller knows exactly which were not acted on."""
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
    operation.status, operation.completed_at = BulkStatus.FAILED, now
    operation.lease_until = operation.claim_token = None
    record_finished(session, operation)


def _schedule(scope, post, scheduled_at):
    post_service.schedule_post(scope, post, scheduled_at)


def _reschedule(scope, post, scheduled_at):
    post_service.reschedule_post(scope, post, scheduled_at)


def _publish(scope, post, _):
    post_service.start_publishing(scope, post)


def _delete(scope, post, _):
    post_service.remove_post(scope, post)


def _archive(scope, post, _):
    post_service.archive_post(scope, post)


_EFFECTS = {"schedule": _schedule, "reschedule": _reschedule, "publish": _publish, "delete": _delete, "archive": _archive}


# -- the sweeper ------------------------------------------------------------------

def resume_stalled(*, database, queue, settings, run, now=None) -> int:
    """Queues `run` (the bulk run job) for every unfinished operation whose lease ran
    out (its worker died, or the queue lost or never got its job), renewing the lease
    so it is queued once per lease rather than once per sweep."""
    now = now or clock.now()
    stalled_now = and_(
        BulkOperation.status.in_((BulkStatus.PENDING, BulkStatus.RUNNING)),
        or_(BulkOperation.lease_until.is_(None), BulkOperation.lease_until < now),
    )
    with database.transaction() as session:
        stalled = claims.due_ids(session, BulkOperation, stalled_now, limit=SWEEP_BATCH)
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
        lost = set(claims.set_where_still(
            session, BulkOperation, stalled, BulkOperation.claim_token.is_not(None),
            {"lease_until": lease_until, "claim_token": None, "runs": BulkOperation.runs + 1},
        ))
        claims.set_where_still(
            session, BulkOperation, [operation_id for operation_id in stalled if operation_id not in lost],
            BulkOperation.claim_token.is_(None), {"lease_until": lease_until},
        )
    return claims.hand_out(
        database=database, queue=queue, run=run, model=BulkOperation, claimed=stalled, job_name="bulk-operation",
    )
