"""Bulk operations through the generated client: schedule drafts in one operation,
follow it, cancel one, list them."""
from __future__ import annotations

import datetime as dt
import time
from uuid import UUID

import pytest
from socialpub_client import AuthenticatedClient
from socialpub_client.api.bulk import (
    cancel_operation,
    create_operation,
    get_operation,
    list_operations,
)
from socialpub_client.api.posts import get_post
from socialpub_client.models.bulk_action_input import BulkActionInput
from socialpub_client.models.bulk_operation import BulkOperation
from socialpub_client.models.bulk_operation_list import BulkOperationList
from socialpub_client.models.bulk_operation_response import BulkOperationResponse
from socialpub_client.models.bulk_request import BulkRequest
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_response import PostResponse

from tests.sdk.journey import SdkServer, expect, expect_error, new_draft

pytestmark = pytest.mark.slow


def _drafts(client: AuthenticatedClient, count: int) -> list[UUID]:
    return [new_draft(client, f"Bulk {n}", PlatformInput.TWITTER).id for n in range(count)]


def _finished(client: AuthenticatedClient, operation: BulkOperation, timeout: float = 30) -> BulkOperation:
    deadline = time.monotonic() + timeout
    while operation.status in ("pending", "running") and time.monotonic() < deadline:
        time.sleep(0.1)
        operation = expect(get_operation.sync_detailed(operation.id, client=client), 200, BulkOperationResponse).data
    return operation


def test_schedule_in_bulk_then_cancel_and_list(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    post_ids = _drafts(client, 3)
    when = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)
    created = expect(
        create_operation.sync_detailed(
            client=client, body=BulkRequest(action=BulkActionInput.SCHEDULE, post_ids=[str(i) for i in post_ids], scheduled_at=when),
        ),
        202, BulkOperationResponse,
    ).data
    assert created.action == "schedule" and created.total == 3

    done = _finished(client, created)
    assert (done.status, done.succeeded, done.failed) == ("completed", 3, 0), done.to_dict()
    for post_id in post_ids:
        post = expect(get_post.sync_detailed(post_id, client=client), 200, PostResponse).data
        assert post.status == "scheduled"

    # A finished operation cannot be cancelled.
    expect_error(cancel_operation.sync_detailed(done.id, client=client), 409, "conflict")

    # The server runs operations at once, so a cancel may meet one already finished:
    # either answer must be the documented one, in its typed model.
    pending = expect(
        create_operation.sync_detailed(
            client=client, body=BulkRequest(action=BulkActionInput.ARCHIVE, post_ids=[str(i) for i in _drafts(client, 5)]),
        ),
        202, BulkOperationResponse,
    ).data
    answer = cancel_operation.sync_detailed(pending.id, client=client)
    if answer.status_code == 409:
        expect_error(answer, 409, "conflict")
        assert _finished(client, pending).status == "completed"
    else:
        cancelled = expect(answer, 200, BulkOperationResponse).data
        assert cancelled.id == pending.id and cancelled.status == "cancelled"
        assert cancelled.processed <= cancelled.total == 5

    listed = expect(list_operations.sync_detailed(client=client, limit=100), 200, BulkOperationList)
    assert {created.id, pending.id} <= {operation.id for operation in listed.data}
