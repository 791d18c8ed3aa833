"""`socialpub bulk list|show|cancel`: a workspace's bulk operations and their progress."""
from __future__ import annotations

from persistence.bulk import BulkOperation
from socialpub.bulk import service
from socialpub.bulk.schemas import BulkOperationSchema
from socialpub.cli.records import Action, Noun, by_service, paged

NOUN = Noun(
    name="bulk", help="bulk operations on posts", model=BulkOperation, resource="bulk operation", plural="operations",
    list_records=paged(service.list_operations), show_record=by_service(service.get_operation, "operation_id"),
    dump=BulkOperationSchema().dump,
    columns=("id", "livemode", "action", "status", "total", "processed", "succeeded", "failed", "createdAt"),
    actions=(
        Action("cancel", "cancel a bulk operation: posts it has not reached stay as they are",
               by_service(service.cancel_operation, "operation_id"), done="Cancelled"),
    ),
)
register = NOUN.register
