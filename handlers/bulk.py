"""Handlers of the `bulk` tag."""
from socialpub import envelope
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_queue, current_runtime, current_session, load
from socialpub.bulk.schemas import BulkOperationSchema, BulkRequestSchema
from socialpub.bulk import service as bulk_service

operation_schema = BulkOperationSchema()
request_schema = BulkRequestSchema()


def list_operations(status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = bulk_service.list_operations(
        session=current_session(), principal=current_principal(), status=status, limit=limit, offset=offset
    )
    return envelope.page(result, lambda operations: operation_schema.dump(operations, many=True))


def create_operation(body):
    fields = load(request_schema, body)
    operation = bulk_service.create_operation(
        session=current_session(), principal=current_principal(), database=current_runtime().database,
        queue=current_queue(), settings=current_runtime().settings, **fields,
    )
    return envelope.accepted(operation_schema.dump(operation), location=f"{API_PREFIX}/bulk/{operation.id}")


def get_operation(operation_id):
    operation = bulk_service.get_operation(
        session=current_session(), principal=current_principal(), operation_id=operation_id
    )
    return envelope.ok(operation_schema.dump(operation))


def cancel_operation(operation_id):
    operation = bulk_service.cancel_operation(
        session=current_session(), principal=current_principal(), operation_id=operation_id
    )
    return envelope.ok(operation_schema.dump(operation))
