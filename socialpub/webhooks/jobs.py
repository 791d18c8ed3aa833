"""The webhooks area's jobs: fan-out and dispatch run periodically, sending runs on
the queue. They take the database, queue and settings from workers.context."""
from __future__ import annotations

from socialpub.webhooks import deliveries, fanout
from workers import context
from workers.registry import job, periodic


# Short database claims, like the publishing dispatcher, run in the scheduler's own
# thread: outbox events keep turning into deliveries while the queue is down, and
# claims it refused are given back.
@periodic(every="webhook_dispatch_interval_seconds", in_scheduler=True)
def fan_out_webhook_events() -> int:
    """Turns new outbox events into webhook deliveries, once per (endpoint, event)."""
    return fanout.fan_out_events(database=context.database(), settings=context.settings())


@job
def deliver_webhooks(endpoint_id: str, token: str) -> int:
    """Sends an endpoint's due deliveries in event order while holding its lease."""
    return deliveries.run_endpoint(
        database=context.database(), endpoint_id=endpoint_id, token=token, settings=context.settings()
    )


@periodic(every="webhook_dispatch_interval_seconds", in_scheduler=True)
def dispatch_webhook_deliveries() -> int:
    """Hands each endpoint with due deliveries (new ones and retries) to one job."""
    return deliveries.dispatch_deliveries(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=deliver_webhooks,
    )


@job
def deliver_webhook(delivery_id: str) -> str | None:
    """One attempt of one delivery (test pings and resends, queued at once)."""
    delivery = deliveries.deliver_now(database=context.database(), delivery_id=delivery_id, settings=context.settings())
    return delivery.status if delivery is not None else None
