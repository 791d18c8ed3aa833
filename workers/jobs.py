"""Job functions. They call the same service functions as the handlers do."""
from __future__ import annotations

from socialpub.keys import service as api_keys
from socialpub.idempotency import service as idempotency
from socialpub.publishing import service as publishing
from workers import context


def load_job_code() -> None:
    """Imports everything a job reaches and builds the ORM mappers and the event
    schema, so a worker pays for them once at start rather than in the first job it
    takes (which, for a bulk operation, added half of its run time)."""
    from sqlalchemy.orm import configure_mappers

    from socialpub.connectors import registry  # noqa: F401
    from socialpub.bulk import service as bulk  # noqa: F401
    from socialpub.events import service as events
    from socialpub.webhooks import service as webhooks

    configure_mappers()
    events.warm_up()


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
    from socialpub.bulk import service as bulk

    return bulk.run_operation(database=context.database(), settings=context.settings(), operation_id=operation_id)


def resume_bulk_operations() -> int:
    """Queues a run for each unfinished bulk operation whose run was lost."""
    from socialpub.bulk import service as bulk

    return bulk.resume_stalled(database=context.database(), queue=context.queue(), settings=context.settings())


def publish_targets(token: str, target_ids: list[str]) -> dict[str, str]:
    """Publishes a slice of claimed targets, one after another."""
    from socialpub.connectors.registry import connector_for

    return publishing.run_publish_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, target_ids=target_ids,
    )


def post_first_comments(token: str, target_ids: list[str]) -> dict[str, str]:
    """Posts the first comments of a slice of claimed targets, one after another."""
    from socialpub.connectors.registry import connector_for

    return publishing.run_comment_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, target_ids=target_ids,
    )


# One target a job: what the dispatcher enqueued before slices (jobs still waiting
# across an upgrade), and what tests run directly.
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


def fan_out_webhook_events() -> int:
    """Turns new outbox events into webhook deliveries, once per (endpoint, event)."""
    from socialpub.webhooks import service as webhooks

    return webhooks.fan_out_events(database=context.database(), settings=context.settings())


def dispatch_webhook_deliveries() -> int:
    """Hands each endpoint with due deliveries (new ones and retries) to one job."""
    from socialpub.webhooks import service as webhooks

    return webhooks.dispatch_deliveries(database=context.database(), queue=context.queue(), settings=context.settings())


def deliver_webhooks(endpoint_id: str, token: str) -> int:
    """Sends an endpoint's due deliveries in event order while holding its lease."""
    from socialpub.webhooks import service as webhooks

    return webhooks.run_endpoint(
        database=context.database(), endpoint_id=endpoint_id, token=token, settings=context.settings()
    )


def deliver_webhook(delivery_id: str) -> str | None:
    """One attempt of one delivery (test pings and resends, queued at once)."""
    from socialpub.webhooks import service as webhooks

    delivery = webhooks.deliver_now(database=context.database(), delivery_id=delivery_id, settings=context.settings())
    return delivery.status if delivery is not None else None
