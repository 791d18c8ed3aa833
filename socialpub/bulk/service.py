"""Bulk operations: one action over up to 500 posts, run by workers in chunks.

This is the request side: the request only records the operation (its posts in one
row), then hands it to the queue; listing, reading and cancelling. The runs are in
`socialpub.bulk.runner`, their jobs in `socialpub.bulk.jobs`. Cancelling changes the
operation's status under the same lock a chunk holds: it takes effect at the next
chunk boundary, never inside a chunk, and answers with the final counts.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import selectinload

from persistence.bulk import FINISHED_STATUSES, BulkOperation, BulkStatus
from socialpub import claims, clock
from socialpub.bulk import runner
from socialpub.bulk.jobs import run_bulk_operation
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError, contract_field
from socialpub.tenancy import TenantScope, parse_id, scoped


ACTIONS = ("schedule", "reschedule", "publish", "delete", "archive")
TIMED_ACTIONS = ("schedule", "reschedule")
MAX_POSTS = 500


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
            raise ApiError.field_invalid("scheduled_at", "With items, each item carries its own scheduledAt.")
        entries = [(item["post_id"], item["scheduled_at"]) for item in items]
    elif post_ids is not None:
        if timed and scheduled_at is None:
            raise ApiError.field_invalid("scheduled_at", f"{action} needs scheduledAt (or items with a time each).")
        if not timed and scheduled_at is not None:
            raise ApiError.field_invalid("scheduled_at", f"scheduledAt is for schedule and reschedule, not {action}.")
        entries = [(post_id, scheduled_at) for post_id in post_ids]
    else:
        raise ApiError.field_invalid("post_ids", "Name the posts: postIds, or items for schedule and reschedule.")
    field = "items" if items is not None else "post_ids"
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
                # The message is read by API callers: it names the other item as they sent it.
                f"Post '{post_id}' is named more than once: {contract_field(_id_field(items, first))} "
                f"names it too{spelled}.",
            )
        seen[identity] = index
    now = clock.now()
    for index, (_, when) in enumerate(entries):
        if when is not None and when <= now:
            name = f"items[{index}].scheduled_at" if items is not None else "scheduled_at"
            raise ApiError.field_invalid(name, "scheduledAt must be in the future.")
    return entries


def _id_field(items, index: int) -> str:
    return f"items[{index}].post_id" if items is not None else f"post_ids[{index}]"


def create_operation(
    *, session, principal, database, queue, settings, action, post_ids=None, scheduled_at=None, items=None,
) -> BulkOperation:
    scope = TenantScope.of(session, principal)
    entries = _entries(action, post_ids, scheduled_at, items)
    operation = scope.add(
        BulkOperation(
            action=action, status=BulkStatus.PENDING, total=len(entries), processed=0, succeeded=0, failed=0, runs=0,
            entries=[[post_id, when.isoformat() if when else None] for post_id, when in entries],
            # The run just queued has this long to start before the sweeper queues another.
            lease_until=clock.now() + dt.timedelta(seconds=settings.bulk_lease_seconds),
            # Known: nothing has been refused yet, so showing it reads nothing back.
            item_errors=[],
        )
    )
    session.commit()
    # A queue that cannot be reached leaves the operation to the sweeper, which queues
    # it as soon as the queue is back.
    claims.hand_out(
        database=database, queue=queue, run=run_bulk_operation, model=BulkOperation, claimed=[operation.id],
        job_name="bulk-operation",
    )
    return operation


@scoped
def list_operations(scope: TenantScope, *, status=None, limit=20, offset=0) -> Page:
    session = scope.session
    criteria = status_filter(BulkOperation.status, status, BulkStatus)
    query = (
        scope.select(BulkOperation, *criteria)
        .options(selectinload(BulkOperation.item_errors))
        .order_by(BulkOperation.created_at.desc(), BulkOperation.id.desc())
    )
    return paginate(session, query, total=scope.count_query(BulkOperation, *criteria), limit=limit, offset=offset)


@scoped
def get_operation(scope: TenantScope, *, operation_id) -> BulkOperation:
    return scope.get(
        BulkOperation, operation_id, resource="bulk operation", options=(selectinload(BulkOperation.item_errors),)
    )


@scoped
def cancel_operation(scope: TenantScope, *, operation_id) -> BulkOperation:
    """Waits for a chunk being applied to commit (the operation's lock), so the
    answer's counts are final: nothing more happens after it. A run of this process
    lets the cancel have the operation before it starts its next chunk."""
    session = scope.session
    with runner.cancels.waiting(operation_id):
        operation = scope.get(BulkOperation, operation_id, resource="bulk operation", for_update=True)
        if operation.status in FINISHED_STATUSES:
            raise ApiError.conflict(
                f"The bulk operation has already {_finished_verb(operation.status)}; it cannot be cancelled."
            )
        now = clock.now()
        operation.status = BulkStatus.CANCELLED
        operation.cancel_requested_at = now
        operation.completed_at = now
        operation.lease_until = operation.claim_token = None
        runner.record_finished(session, operation)
        session.commit()
    return operation


def _finished_verb(status: str) -> str:
    return {BulkStatus.COMPLETED: "completed", BulkStatus.CANCELLED: "been cancelled", BulkStatus.FAILED: "failed"}[status]
