"""Outbox events become deliveries.

A change writes an `Event` row in its own transaction (socialpub/events). Then
`fan_out_events` (periodic) turns each new event into one `WebhookDelivery` per
enabled endpoint of the event's workspace and mode that subscribes to its type and
existed when the event happened. A `WebhookFanOut` row marks the event done in the
same transaction; its primary key and the unique (endpoint, event) constraint make a
second or concurrent fan-out a no-op (SKIP LOCKED on PostgreSQL spreads the work;
SQLite serialises writers). Events older than the retry window are not fanned out.

A fan-out reads on from the newest event fanned out, so a batch costs the same however
many events went before it (a burst of 100,000 publications). An event whose
transaction committed after newer ones were fanned out is behind that point: every
LATE_SCAN_SECONDS (and at a process's first fan-out) one reads back FANOUT_LOOKBACK
further for such events.

This is system work across every workspace: it reads events and endpoints by id.
"""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import exists, func, select

from persistence import plans
from persistence.events import Event
from persistence.types import UtcDateTime, utcnow
from persistence.webhooks import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookFanOut
from socialpub import claims, sweeps
from socialpub.webhooks.signing import payload

# A missed transaction that committed late is still fanned out if it started within
# this long before the newest event already fanned out.
FANOUT_LOOKBACK = dt.timedelta(minutes=10)
# How often a fan-out reads back that far: reading back on every fan-out read every
# event of the last ten minutes each time, a cost growing with a burst's events.
LATE_SCAN_SECONDS = 30.0
INSERT_BATCH = 500

# When this process next reads back for late events.
_late_scan = sweeps.Interval()


def subscribes(endpoint: WebhookEndpoint, event_type: str) -> bool:
    # No list of types subscribes to every type, including types added later.
    return endpoint.event_types is None or event_type in endpoint.event_types


def fan_out_events(*, database, settings, now=None, limit: int | None = None) -> int:
    """Turns new outbox events into deliveries; returns how many deliveries it made.
    Safe to run in any number of workers at once."""
    now = now or utcnow()
    limit = limit or settings.webhook_batch_size
    oldest = now - dt.timedelta(seconds=settings.webhook_retry_window_seconds)
    reading_back = _late_scan.due(LATE_SCAN_SECONDS)
    with database.transaction() as session:
        newest_done = session.execute(select(func.max(WebhookFanOut.event_created_at))).scalar()
        behind = FANOUT_LOOKBACK if reading_back else dt.timedelta(0)
        floor = oldest if newest_done is None else max(oldest, newest_done - behind)
        # Without their data: most events (a burst of publications) go to no endpoint.
        # The floor is stated (persistence.plans): prepared, a plan for any floor joined
        # every event with every fan-out mark (40 ms at 100,000 events, growing).
        query = (
            select(Event.id, Event.created_at, Event.workspace_id, Event.livemode, Event.type)
            .where(
                Event.created_at >= plans.stated(floor, UtcDateTime()),
                ~exists().where(WebhookFanOut.event_id == Event.id),
            )
            .order_by(Event.created_at, Event.id)
            .limit(limit)
        )
        # Another worker's batch is skipped, not waited for.
        events = session.execute(claims.lock_rows(session, query, skip_locked=True, of=Event)).all()
        if not events:
            return 0
        # Marked in one statement; an event another worker marked first is theirs.
        marked = set(claims.insert_new(
            session, WebhookFanOut,
            [dict(event_id=event.id, event_created_at=event.created_at, created_at=now) for event in events],
            unique=["event_id"], returning=WebhookFanOut.event_id,
        ))
        tenants = {(event.workspace_id, event.livemode) for event in events}
        endpoints: dict[tuple, list[WebhookEndpoint]] = {}
        candidates = session.execute(
            select(WebhookEndpoint).where(
                WebhookEndpoint.enabled.is_(True),
                WebhookEndpoint.workspace_id.in_({workspace_id for workspace_id, _ in tenants}),
            ).order_by(WebhookEndpoint.created_at)
        ).scalars()
        for endpoint in candidates:
            endpoints.setdefault((endpoint.workspace_id, endpoint.livemode), []).append(endpoint)
        wanted = [
            (event, [
                endpoint for endpoint in endpoints.get((event.workspace_id, event.livemode), ())
                # An endpoint receives what happens after it was added, not history.
                if subscribes(endpoint, event.type) and endpoint.created_at <= event.created_at
            ])
            for event in events if event.id in marked
        ]
        wanted = [(event, receivers) for event, receivers in wanted if receivers]
        if not wanted:
            return 0
        data = dict(session.execute(
            select(Event.id, Event.data).where(Event.id.in_([event.id for event, _ in wanted]))
        ).all())
        rows = [
            dict(
                id=uuid.uuid4(), workspace_id=event.workspace_id, livemode=event.livemode, endpoint_id=endpoint.id,
                event_id=event.id, event_type=event.type, event_created_at=event.created_at,
                payload=payload(identifier=event.id, type=event.type, created_at=event.created_at, data=data[event.id]),
                status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=now, created_at=now, updated_at=now,
            )
            for event, receivers in wanted
            for endpoint in receivers
        ]
        created = 0
        for start in range(0, len(rows), INSERT_BATCH):
            created += len(claims.insert_new(
                session, WebhookDelivery, rows[start:start + INSERT_BATCH],
                unique=["endpoint_id", "event_id"], returning=WebhookDelivery.id,
            ))
    return created
