"""Sending deliveries: one sender per endpoint, one claimed attempt at a time, and
what each outcome does to the delivery and to the endpoint's health.

`dispatch_deliveries` (periodic) leases each endpoint with due deliveries to one
`deliver_webhooks` job, which sends them one at a time, oldest event first. First
attempts therefore reach an endpoint in event order; a delivery waiting for a retry
does not hold back the ones after it (receivers order by `created_at`). Every attempt
claims its delivery with a lease (a worker that dies mid-attempt loses it when the
lease runs out), goes through the guarded outbound client, and is recorded under that
claim. Delivery is at least once: receivers deduplicate on the body's `id`.

Outcomes: a 2xx answer succeeds. Any other answer, a timeout, a connection error or an
unforeseen failure of the attempt itself (`internal_error`) is retried after
`webhook_retry_base_seconds * 2^(attempts-1)` (capped at `webhook_retry_max_seconds`,
+-20% jitter) until `webhook_retry_window_seconds` (3 days) after the first attempt,
when one last attempt is made and the delivery fails. A URL the guard refuses
(non-public address, bad scheme, unusable host name, redirect to a private address)
fails the delivery at once with `url_refused`: that is the operator's policy, and
retrying would not change it. An attempt that stops before its outcome is recorded
(its worker killed, or the recording failing) counts, once its lease runs out, as a
failed attempt with `attempt_interrupted`, retried like the others.

Automatic disable: an endpoint whose every attempt has failed for
`webhook_disable_after_seconds` (3 days), at least `webhook_disable_min_failures` of
them, is disabled with a reason, and its pending deliveries fail with
`endpoint_disabled`. Since the retry window runs from a delivery's first attempt, an
endpoint down for good is disabled at the last attempt of the first delivery it
failed.

Test pings are sent once, without retries, and do not count toward an endpoint's
health; they may be sent to a disabled endpoint, to check a fix before enabling it.
"""
from __future__ import annotations

import datetime as dt
import logging
import random
import uuid
from dataclasses import dataclass
from typing import Callable

import httpx
from sqlalchemy import and_, exists, or_, select, update

from persistence.types import utcnow
from persistence.webhooks import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from socialpub import backoff, claims, clock
from socialpub.errors import ApiError
from socialpub.outbound import (
    GuardedClient, OutboundFailed, OutboundRefused, OutboundTimedOut, ResponseTooLarge, UndecodableResponse,
)
from socialpub.tenancy import parse_id
from socialpub.webhooks.signing import decrypt_secret, format_timestamp, signature_header

logger = logging.getLogger("socialpub.webhooks")

TEST_PING = "test.ping"
# A receiver's answer is not read beyond this: only its status matters.
MAX_RESPONSE_BYTES = 64 * 1024


# -- disabling an endpoint ------------------------------------------------------------

def fail_pending(session, endpoint_id, *, code: str, message: str, now, keep=None) -> None:
    query = (
        update(WebhookDelivery)
        .where(WebhookDelivery.endpoint_id == endpoint_id, WebhookDelivery.status == DeliveryStatus.PENDING)
        .values(status=DeliveryStatus.FAILED, next_attempt_at=None, last_error_code=code, last_error_message=message,
                updated_at=now)
        .execution_options(synchronize_session=False)
    )
    if keep is not None:
        query = query.where(WebhookDelivery.id != keep)
    session.execute(query)


def disable_endpoint(session, endpoint: WebhookEndpoint, reason: str, now, *, keep=None) -> None:
    """Disables the endpoint; its pending deliveries (but `keep`) fail with
    endpoint_disabled. Events that happen while it is disabled are not delivered to it."""
    endpoint.enabled = False
    endpoint.disabled_at = now
    endpoint.disabled_reason = reason
    fail_pending(session, endpoint.id, code="endpoint_disabled", message=f"The endpoint was disabled: {reason}", now=now, keep=keep)


# -- one attempt ----------------------------------------------------------------------

@dataclass
class Outcome:
    succeeded: bool
    status_code: int | None = None
    latency_ms: int | None = None
    error_code: str | None = None
    error_message: str | None = None
    retryable: bool = True


def _client(settings) -> GuardedClient:
    # The timeout is for the whole attempt, redirects included: a receiver that drips
    # its answer must not hold a worker (or the dashboard page that sent a test event).
    return GuardedClient(
        timeout=httpx.Timeout(settings.webhook_timeout_seconds, connect=min(5.0, settings.webhook_timeout_seconds)),
        total_timeout=settings.webhook_timeout_seconds,
        max_bytes=MAX_RESPONSE_BYTES,
    )


def _send(client: GuardedClient, url: str, secret: str, delivery_id, event_type: str, body: bytes) -> Outcome:
    headers = {
        "Content-Type": "application/json",
        "X-Service-Event": event_type,
        "X-Service-Delivery": str(delivery_id),
        # Signed at send time: receivers reject stale timestamps, and a retry days later
        # must still pass.
        "X-Service-Signature": signature_header(secret, int(clock.now().timestamp()), body),
    }
    started = clock.monotonic()

    def elapsed() -> int:
        return int((clock.monotonic() - started) * 1000)

    try:
        response = client.post(url, headers=headers, content=body)
    except (ResponseTooLarge, UndecodableResponse) as exc:
        # The endpoint answered; only its status counts, whatever its body.
        status = exc.status_code
        if 200 <= status < 300:
            return Outcome(True, status, elapsed())
        return Outcome(False, status, elapsed(), "http_error", f"The endpoint answered {status}.")
    except OutboundRefused as exc:
        return Outcome(False, None, elapsed(), "url_refused", str(exc), retryable=False)
    except OutboundTimedOut as exc:
        return Outcome(False, None, elapsed(), "timeout", f"The endpoint did not answer in time ({exc}).")
    except OutboundFailed as exc:
        return Outcome(False, None, elapsed(), "connection_error", str(exc))
    if 200 <= response.status_code < 300:
        return Outcome(True, response.status_code, elapsed())
    return Outcome(False, response.status_code, elapsed(), "http_error", f"The endpoint answered {response.status_code}.")


def retry_delay(attempts: int, settings, *, rng=random) -> dt.timedelta:
    """The wait before the next attempt: the one backoff, with the webhook settings."""
    return dt.timedelta(seconds=backoff.delay_seconds(
        attempts, base=settings.webhook_retry_base_seconds, maximum=settings.webhook_retry_max_seconds, rng=rng,
    ))


def _due(now):
    return and_(
        WebhookDelivery.status == DeliveryStatus.PENDING,
        WebhookDelivery.next_attempt_at <= now,
        or_(WebhookDelivery.lease_until.is_(None), WebhookDelivery.lease_until < now),
    )


def _claim_delivery(session, delivery_id, *, now, lease: dt.timedelta) -> str | None:
    token = str(uuid.uuid4())
    claimed = claims.claim(
        session, WebhookDelivery, and_(WebhookDelivery.id == delivery_id, _due(now)),
        values={"lease_until": now + lease, "claim_token": token}, of=WebhookDelivery,
    )
    return token if claimed else None


def _count_attempt(delivery: WebhookDelivery, now, settings) -> None:
    """An attempt's bookkeeping on the delivery itself, whatever its outcome: counted,
    timed, its retry window opened by the first, its claim given up."""
    delivery.attempts += 1
    delivery.first_attempt_at = delivery.first_attempt_at or now
    delivery.last_attempt_at = now
    if delivery.give_up_at is None:
        delivery.give_up_at = now + dt.timedelta(seconds=settings.webhook_retry_window_seconds)
    delivery.lease_until = delivery.claim_token = None


def _retry_or_fail(delivery: WebhookDelivery, now, settings, *, retryable: bool) -> None:
    """After a failed attempt: due again after the backoff, or failed for good (a test
    ping, a failure retrying cannot change, or the retry window over)."""
    if delivery.event_type == TEST_PING or not retryable or now >= delivery.give_up_at:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
    else:
        delivery.status = DeliveryStatus.PENDING
        # The last retry lands on the end of the window rather than past it.
        delivery.next_attempt_at = min(now + retry_delay(delivery.attempts, settings), delivery.give_up_at)


def _record(session, delivery: WebhookDelivery, endpoint: WebhookEndpoint, outcome: Outcome, now, settings) -> None:
    test = delivery.event_type == TEST_PING
    _count_attempt(delivery, now, settings)
    delivery.response_status = outcome.status_code
    delivery.latency_ms = outcome.latency_ms
    if outcome.succeeded:
        delivery.status = DeliveryStatus.SUCCEEDED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
        delivery.last_error_code = delivery.last_error_message = None
        if not test:
            endpoint.consecutive_failures, endpoint.failing_since = 0, None
            endpoint.last_success_at = now
        return
    delivery.last_error_code, delivery.last_error_message = outcome.error_code, outcome.error_message
    _retry_or_fail(delivery, now, settings, retryable=outcome.retryable)
    if test or not endpoint.enabled:
        return
    endpoint.consecutive_failures += 1
    endpoint.failing_since = endpoint.failing_since or now
    failing_for = now - endpoint.failing_since
    if (endpoint.consecutive_failures >= settings.webhook_disable_min_failures
            and failing_for >= dt.timedelta(seconds=settings.webhook_disable_after_seconds)):
        reason = (
            f"Disabled automatically: all {endpoint.consecutive_failures} delivery attempts since "
            f"{format_timestamp(endpoint.failing_since)} failed; the last: {outcome.error_message}"
        )
        delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
        disable_endpoint(session, endpoint, reason, now, keep=delivery.id)
        logger.warning("webhook endpoint disabled", extra={"endpoint_id": str(endpoint.id)})


INTERRUPTED_CODE = "attempt_interrupted"


def _record_interrupted(delivery: WebhookDelivery, now, settings) -> None:
    """Counts the attempt of a delivery whose claim ran out unrecorded (its worker
    died, or recording its outcome failed) as a failed attempt, retried like one: a
    delivery that stops its worker every time ends with its retry window instead of
    being taken up after every lease for ever. Only the delivery's own columns are
    written, so whatever stopped the recording cannot stop this too."""
    _count_attempt(delivery, now, settings)
    delivery.last_error_code = INTERRUPTED_CODE
    delivery.last_error_message = "The attempt stopped before its outcome was recorded; the endpoint may have received it."
    _retry_or_fail(delivery, now, settings, retryable=True)


def deliver_now(*, database, delivery_id, settings, client: GuardedClient | None = None, now=None) -> WebhookDelivery | None:
    """Makes one attempt of a due delivery, synchronously, and records it. A delivery
    that is not due, or that another worker holds, is left alone (returned as it is);
    one whose previous attempt ran out its lease unrecorded has that attempt counted
    as failed instead (see _record_interrupted)."""
    client = client or _client(settings)
    parsed = parse_id(delivery_id)
    if parsed is None:
        raise ApiError.not_found("webhook delivery", delivery_id)
    started = now or utcnow()
    lease = dt.timedelta(seconds=max(settings.webhook_lease_seconds, settings.webhook_timeout_seconds * 3))
    with database.transaction() as session:
        interrupted = session.execute(claims.lock_rows(session, select(WebhookDelivery).where(
            WebhookDelivery.id == parsed, _due(started), WebhookDelivery.claim_token.is_not(None)
        ))).scalar_one_or_none()
        if interrupted is not None:
            _record_interrupted(interrupted, started, settings)
            return interrupted
        token = _claim_delivery(session, parsed, now=started, lease=lease)
        delivery = session.get(WebhookDelivery, parsed)
        if token is None:
            return delivery
        endpoint = session.get(WebhookEndpoint, delivery.endpoint_id)
        if not endpoint.enabled and delivery.event_type != TEST_PING:
            delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
            delivery.lease_until = delivery.claim_token = None
            delivery.last_error_code = "endpoint_disabled"
            delivery.last_error_message = f"The endpoint was disabled: {endpoint.disabled_reason}"
            return delivery
        url, encrypted_secret = endpoint.url, endpoint.secret_encrypted
        event_type, body = delivery.event_type, delivery.payload.encode()
    # No transaction is held while the receiver takes its time.
    try:
        secret = decrypt_secret(encrypted_secret)
        outcome = _send(client, url, secret, parsed, event_type, body)
    except Exception as exc:  # noqa: BLE001 - any failure is this attempt's outcome
        # Unrecorded, the delivery would keep its claim and no retry window, and be
        # taken up again after every lease for ever. Only the type is shown: the
        # exception's text may quote the secret or the URL's credentials.
        logger.error("webhook delivery attempt failed unexpectedly", exc_info=True, extra={"delivery_id": str(parsed)})
        outcome = Outcome(False, None, None, "internal_error",
                          f"The delivery could not be attempted ({exc.__class__.__name__}); it is retried like a failed attempt.")
    finished = now or utcnow()
    with database.transaction() as session:
        delivery = session.execute(
            claims.lock_rows(session, select(WebhookDelivery).where(WebhookDelivery.id == parsed))
        ).scalar_one_or_none()
        if delivery is None or delivery.claim_token != token:
            # Deleted meanwhile, or our lease ran out and another attempt took over.
            return delivery
        endpoint = session.execute(
            claims.lock_rows(session, select(WebhookEndpoint).where(WebhookEndpoint.id == delivery.endpoint_id))
        ).scalar_one()
        _record(session, delivery, endpoint, outcome, finished, settings)
    return delivery


# -- dispatch: one sender per endpoint ------------------------------------------------

def claim_endpoints(session, *, now, lease: dt.timedelta, limit: int) -> list[tuple[uuid.UUID, str]]:
    """Leases endpoints that have due deliveries and no sender; commits."""
    free = or_(WebhookEndpoint.lease_until.is_(None), WebhookEndpoint.lease_until < now)
    has_due = exists().where(WebhookDelivery.endpoint_id == WebhookEndpoint.id, _due(now))
    token = str(uuid.uuid4())
    claimed = claims.claim(
        session, WebhookEndpoint, and_(free, has_due), values={"lease_until": now + lease, "claim_token": token},
        order_by=WebhookEndpoint.lease_until, limit=limit, of=WebhookEndpoint,
    )
    session.commit()
    return [(endpoint_id, token) for endpoint_id in claimed]


def dispatch_deliveries(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each endpoint with due deliveries to one `run(endpoint_id, token)` job
    (`deliver_webhooks`); returns how many it handed out. This is also the retry
    sweep: a delivery whose backoff has passed is simply due again."""
    now = now or utcnow()
    lease = dt.timedelta(seconds=settings.webhook_lease_seconds)
    with database.transaction() as session:
        leased = claim_endpoints(session, now=now, lease=lease, limit=settings.webhook_batch_size)
    if not leased:
        return 0
    # One claim: the endpoints leased together share its token.
    token = leased[0][1]
    return claims.hand_out(
        database=database, queue=queue, run=run, model=WebhookEndpoint, token=token,
        claimed=[endpoint_id for endpoint_id, _ in leased], job_name="webhook-endpoint",
    )


def run_endpoint(*, database, endpoint_id, token, settings, client: GuardedClient | None = None, now=None) -> int:
    """Sends an endpoint's due deliveries one at a time, oldest event first, while the
    endpoint's lease is ours; returns how many attempts it made. Stops after half a
    lease or a batch, leaving the rest to the next dispatch."""
    client = client or _client(settings)
    parsed = parse_id(endpoint_id)
    lease = dt.timedelta(seconds=settings.webhook_lease_seconds)
    deadline = clock.monotonic() + settings.webhook_lease_seconds / 2
    attempted = 0
    try:
        while attempted < settings.webhook_batch_size and clock.monotonic() < deadline:
            current = now or utcnow()
            with database.transaction() as session:
                renewed = session.execute(
                    update(WebhookEndpoint)
                    .where(WebhookEndpoint.id == parsed, WebhookEndpoint.claim_token == token)
                    .values(lease_until=current + lease)
                    .execution_options(synchronize_session=False)
                )
                if renewed.rowcount != 1:
                    return attempted  # the lease ran out and another sender has the endpoint
                next_id = session.execute(
                    select(WebhookDelivery.id)
                    .where(WebhookDelivery.endpoint_id == parsed, _due(current))
                    .order_by(WebhookDelivery.event_created_at, WebhookDelivery.created_at, WebhookDelivery.id)
                    .limit(1)
                ).scalar()
            if next_id is None:
                break
            try:
                deliver_now(database=database, delivery_id=next_id, settings=settings, client=client, now=now)
            except Exception:  # noqa: BLE001 - one delivery must not hold back the endpoint's others
                # Left claimed, it is not due again until its lease runs out, when its
                # attempt is counted as interrupted. A database that is gone fails the
                # next lease renewal too, and ends the run.
                logger.exception("webhook delivery could not be recorded", extra={"delivery_id": str(next_id)})
            attempted += 1
    finally:
        with database.transaction() as session:
            claims.release(session, WebhookEndpoint, parsed, token)
    return attempted
