"""An attempt that stops before its outcome is recorded (its worker killed, or the
recording failing) holds back nothing and ends: the endpoint's run goes on to its next
delivery, and once the attempt's lease runs out it counts as a failed attempt, retried
with backoff until the retry window closes, when the delivery fails."""
import datetime as dt

import pytest
from sqlalchemy import select

from persistence.types import utcnow
from persistence.webhooks import WebhookDelivery
from socialpub.events import service as events
from socialpub.webhooks import deliveries as webhook_deliveries, fanout

WINDOW_SECONDS = 600


@pytest.fixture
def settings_(wh_settings):
    return wh_settings.replace(webhook_retry_window_seconds=WINDOW_SECONDS)


def deliveries_of(db, session, workspace, settings, endpoint, count: int) -> list[WebhookDelivery]:
    for number in range(count):
        events.record(session, workspace_id=workspace.id, livemode=False, type="post.published",
                      data={"post": {"id": f"p{number}"}})
        session.commit()
    fanout.fan_out_events(database=db, settings=settings)
    session.expire_all()
    return list(session.execute(
        select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id).order_by(WebhookDelivery.event_created_at)
    ).scalars())


def unrecordable(monkeypatch, delivery_id) -> list:
    """Makes recording any attempt of `delivery_id` raise; returns the attempts tried."""
    real_record = webhook_deliveries._record
    tried = []

    def record(session, delivery, endpoint, outcome, now, settings):
        if delivery.id == delivery_id:
            tried.append(now)
            raise RuntimeError("the outcome could not be written")
        return real_record(session, delivery, endpoint, outcome, now, settings)

    monkeypatch.setattr(webhook_deliveries, "_record", record)
    return tried


def reload(session, delivery_id) -> WebhookDelivery:
    session.expire_all()
    return session.get(WebhookDelivery, delivery_id)


def test_the_endpoints_run_goes_on_past_an_unrecordable_attempt(db, session, workspace, add_endpoint, receiver, settings_, monkeypatch):
    endpoint, _ = add_endpoint()
    first, second = deliveries_of(db, session, workspace, settings_, endpoint, 2)
    unrecordable(monkeypatch, first.id)
    now = utcnow()
    with db.transaction() as claim_session:
        [(endpoint_id, token)] = webhook_deliveries.claim_endpoints(
            claim_session, now=now, lease=dt.timedelta(seconds=settings_.webhook_lease_seconds), limit=10
        )
    attempted = webhook_deliveries.run_endpoint(
        database=db, endpoint_id=str(endpoint_id), token=token, settings=settings_, now=now
    )
    assert attempted == 2 and len(receiver.received) == 2
    assert reload(session, second.id).status == "succeeded"
    held = reload(session, first.id)
    assert held.status == "pending" and held.claim_token is not None and held.attempts == 0


def test_an_attempt_that_never_records_ends_with_the_retry_window(db, session, workspace, add_endpoint, receiver, settings_, monkeypatch):
    endpoint, _ = add_endpoint()
    [delivery] = deliveries_of(db, session, workspace, settings_, endpoint, 1)
    tried = unrecordable(monkeypatch, delivery.id)
    now, counted = utcnow(), []
    for _ in range(200):
        try:
            webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=settings_, now=now)
        except RuntimeError:
            pass
        current = reload(session, delivery.id)
        if current.status != "pending":
            break
        if current.claim_token is None:
            # The interrupted attempt was counted: not due again before its backoff.
            counted.append(current.attempts)
            assert current.last_error_code == "attempt_interrupted"
            assert current.next_attempt_at > now
            now = current.next_attempt_at
        else:
            # An attempt in flight: due again, as interrupted, once its lease runs out.
            now = current.lease_until + dt.timedelta(seconds=1)
    else:
        pytest.fail("the delivery never ended")
    assert current.status == "failed" and current.last_error_code == "attempt_interrupted"
    assert current.claim_token is None and current.next_attempt_at is None
    assert now >= current.give_up_at
    # Every attempt sent was counted, the last one failing the delivery.
    assert counted == list(range(1, len(tried))) and current.attempts == len(tried)
    assert len(receiver.received) == len(tried)
