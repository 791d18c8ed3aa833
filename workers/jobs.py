"""Job functions. They call the same service functions as the handlers do."""
from __future__ import annotations

from socialpub.services import api_keys, idempotency, publishing
from workers import context


def purge_expired_key_secrets() -> int:
    """Deletes rolled key values whose grace period has ended."""
    with context.database().transaction() as session:
        return api_keys.purge_expired_secrets(session=session)


def purge_expired_idempotency_records() -> int:
    """Deletes kept Idempotency-Key responses older than 24 hours."""
    with context.database().transaction() as session:
        return idempotency.purge_expired(session=session)


def dispatch_due() -> int:
    """Claims due targets and first comments and enqueues a job for each."""
    return publishing.dispatch_due(database=context.database(), queue=context.queue(), settings=context.settings())


def run_bulk_operation(operation_id: str) -> str:
    """Applies a bulk operation, chunk by chunk, until it is finished."""
    from socialpub.services import bulk

    return bulk.run_operation(database=context.database(), settings=context.settings(), operation_id=operation_id)


def resume_bulk_operations() -> int:
    """Queues a run for each unfinished bulk operation whose run was lost."""
    from socialpub.services import bulk

    return bulk.resume_stalled(database=context.database(), queue=context.queue(), settings=context.settings())


def publish_target(target_id: str, token: str) -> str:
    from socialpub.connectors.registry import connector_for

    return publishing.run_publish_job(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        target_id=target_id, token=token,
    )


def post_first_comment(target_id: str, token: str) -> str:
    from socialpub.connectors.registry import connector_for

    return publishing.run_comment_job(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        target_id=target_id, token=token,
    )
