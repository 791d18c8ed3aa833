"""The bulk area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.bulk import BulkOperation, BulkStatus
from tests.support.contract import RecordFactory, SuccessRequest
from tests.support.factories import make_bulk_operation, make_post


def _operation(session, workspace, livemode):
    return make_bulk_operation(session, workspace, livemode=livemode).id


def _find_pending_operation(session, operation_id):
    # Still pending: a refused cancel must not have cancelled it.
    return session.execute(
        select(BulkOperation).where(BulkOperation.id == operation_id, BulkOperation.status == BulkStatus.PENDING)
    ).scalar_one_or_none()


def _archive_a_draft(session, workspace):
    # The spec has no example body for a bulk request; this one names a post of the caller's.
    post = make_post(session, workspace)
    return SuccessRequest(body={"action": "archive", "postIds": [str(post.id)]})


RECORD_FACTORIES = {
    "operationId": RecordFactory(make=_operation, find=_find_pending_operation),
}

SUCCESS_REQUESTS = {
    "bulk.create_operation": _archive_a_draft,
}
