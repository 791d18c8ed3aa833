"""Webhook endpoints, and the signed delivery of outbox events to them.

How an event gets out:

1. A change writes an `Event` row in its own transaction (services/events.py).
2. `fan_out_events` (periodic) turns each new event into one `WebhookDelivery` per
   enabled endpoint of the event's workspace and mode that subscribes to its type and
   existed when the event happened. A `WebhookFanOut` row marks the event done in the
   same transaction; its primary key and the unique (endpoint, event) constraint make
   a second or concurrent fan-out a no-op (SKIP LOCKED on PostgreSQL spreads the work;
   SQLite serialises writers). Events older than the retry window are not fanned out.
3. `dispatch_deliveries` (periodic) leases each endpoint with due deliveries to one
   `deliver_webhooks` job, which sends them one at a time, oldest event first. First
   attempts therefore reach an endpoint in event order; a delivery waiting for a retry
   does not hold back the ones after it (receivers order by `created_at`).
4. Every attempt claims its delivery with a lease (a worker that dies mid-attempt
   loses it when the lease runs out), goes through the guarded outbound client, and
   is recorded under that claim. Delivery is at least once: receivers deduplicate on
   the body's `id` (the event id, the same for every attempt, endpoint and resend).

Outcomes: a 2xx answer succeeds. Any other answer, a timeout, a connection error or an
unforeseen failure of the attempt itself (`internal_error`) is retried after
`webhook_retry_base_seconds * 2^(attempts-1)` (capped at `webhook_retry_max_seconds`,
+-20% jitter) until `webhook_retry_window_seconds` (3 days) after the first attempt,
when one last attempt is made and the delivery fails. A URL the guard refuses
(non-public address, bad scheme, unusable host name, redirect to a private address)
fails the delivery at once with `url_refused`: that is the operator's policy, and
retrying would not change it.

Automatic disable: an endpoint whose every attempt has failed for
`webhook_disable_after_seconds` (3 days), at least `webhook_disable_min_failures` of
them, is disabled with a reason, and its pending deliveries fail with
`endpoint_disabled`. Since the retry window runs from a delivery's first attempt, an
endpoint down for good is disabled at the last attempt of the first delivery it
failed. Events that happen while an endpoint is disabled are not delivered to it.

Test pings are sent once, without retries, and do not count toward an endpoint's
health; they may be sent to a disabled endpoint, to check a fix before enabling it.

Resend makes the same delivery pending again (same id in `X-Service-Delivery`, same
body), with a fresh retry window; attempts keep counting.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import random
import secrets
import time
import uuid
from dataclasses import dataclass

import httpx
from sqlalchemy import and_, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from persistence.events import Event
from persistence.workspaces import Workspace
from persistence.types import utcnow
from persistence.webhooks import WebhookDelivery, WebhookEndpoint, WebhookFanOut
from socialpub import crypto
from socialpub.errors import ApiError
from socialpub.outbound import (
    Allowlist, GuardedClient, OutboundFailed, OutboundRefused, OutboundTimedOut, ResponseTooLarge, host_problem,
)
from socialpub.events.service import EVENT_TYPES

logger = logging.getLogger("socialpub.webhooks")

PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"
TEST_PING = "test.ping"
SECRET_PREFIX = "whsec_"
MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 500
# A receiver's answer is not read beyond this: only its status matters.
MAX_RESPONSE_BYTES = 64 * 1024
# A missed transaction that committed late is still fanned out if it started within
# this long before the newest event already fanned out.
FANOUT_LOOKBACK = dt.timedelta(minutes=10)
DELIVER_JOB = "workers.jobs.deliver_webhook"
ENDPOINT_JOB = "workers.jobs.deliver_webhooks"


def _settings(settings):
    if settings is None:
        from socialpub.config import Settings

        settings = Settings.from_env()
    return settings


def _timestamp(value: dt.datetime) -> str:
    value = value.astimezone(dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _payload(*, identifier, type: str, created_at: dt.datetime, data: dict) -> str:
    return json.dumps(
        {"id": str(identifier), "type": type, "created_at": _timestamp(created_at), "data": data},
        separators=(",", ":"), ensure_ascii=False,
    )


# -- signatures ---------------------------------------------------------------------

def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of "<timestamp>.<body>" under the endpoint's secret."""
    if isinstance(body, str):
        body = body.encode()
    message = str(int(timestamp)).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={int(timestamp)},v1={sign(secret, timestamp, body)}"


def verify_signature(secret: str, header: str | None, body: bytes, *, tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """Whether `X-Service-Signature` is valid for the raw body: a timestamp within the
    tolerance (so a captured request cannot be replayed later) and a v1 that matches,
    compared in constant time. Several v1 values are accepted, any one matching."""
    if not header:
        return False
    timestamp, candidates = None, []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            timestamp = value
        elif name == "v1":
            candidates.append(value)
    try:
        timestamp = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        return False
    expected = sign(secret, timestamp, body)
    matched = False
    for candidate in candidates:
        # Every candidate is compared, so the time taken says nothing about which.
        matched |= hmac.compare_digest(expected.encode(), candidate.encode())
    return matched


# -- endpoints ----------------------------------------------------------------------

def _check_url(url, *, livemode: bool) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ApiError.field_invalid("url", "A URL is required.")
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise ApiError.field_invalid("url", f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(character.isspace() for character in url):
        raise ApiError.field_invalid("url", "The URL contains whitespace.")
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - any unparsable URL
        raise ApiError.field_invalid("url", f"Not a valid URL: {url!r}.") from None
    if parsed.scheme not in ("http", "https"):
        raise ApiError.field_invalid("url", "The URL must start with https:// (or http:// in test mode).")
    if not parsed.host:
        raise ApiError.field_invalid("url", "The URL has no host.")
    problem = host_problem(parsed)
    if problem:
        raise ApiError.field_invalid("url", f"The URL's host is not valid: {problem}.")
    # Signatures prove who sent an event but do not hide it: live events go over TLS.
    # Hosts the operator allows (local development, tests) are exempt.
    if livemode and parsed.scheme != "https" and not Allowlist.from_env().allows_host(parsed.host):
        raise ApiError.field_invalid("url", "A live-mode endpoint must use https://.")
    # Whether the address is public is checked on every attempt, after resolution, by
    # the guarded client: DNS can change after creation, and a refusal is then
    # recorded on the delivery for the owner to see.
    return url


def _check_event_types(event_types) -> list[str] | None:
    if event_types is None:
        return None
    if not isinstance(event_types, (list, tuple)) or not event_types:
        raise ApiError.field_invalid("eventTypes", "List at least one event type, or omit it to receive every type.")
    chosen = []
    for event_type in event_types:
        if event_type not in EVENT_TYPES:
            raise ApiError.field_invalid(
                "eventTypes", f"Unknown event type {event_type!r}; known types: {', '.join(EVENT_TYPES)}."
            )
        if event_type not in chosen:
            chosen.append(event_type)
    return chosen


def _check_description(description) -> str | None:
    if description is None:
        return None
    if not isinstance(description, str):
        raise ApiError.field_invalid("description", "The description must be text.")
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise ApiError.field_invalid("description", f"The description is longer than {MAX_DESCRIPTION_LENGTH} characters.")
    return description.strip() or None


def create_endpoint(*, session, workspace_id, livemode: bool, url: str, description: str | None,
                    event_types: list[str] | None) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its signing secret, which is not shown again."""
    url = _check_url(url, livemode=livemode)
    event_types = _check_event_types(event_types)
    description = _check_description(description)
    if session.get(Workspace, workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    endpoint = WebhookEndpoint(
        workspace_id=workspace_id, livemode=bool(livemode), url=url, description=description,
        event_types=event_types, secret_encrypted=crypto.encrypt_json({"secret": secret}),
        secret_prefix=secret[: len(SECRET_PREFIX) + 6], enabled=True, consecutive_failures=0,
    )
    session.add(endpoint)
    session.commit()
    return endpoint, secret


def endpoint_secret(endpoint: WebhookEndpoint) -> str:
    return _decrypt_secret(endpoint.secret_encrypted)


def _decrypt_secret(token: str) -> str:
    return crypto.decrypt_json(token)["secret"]


def subscribes(endpoint: WebhookEndpoint, event_type: str) -> bool:
    return endpoint.event_types is None or event_type in endpoint.event_types


def list_endpoints(*, session, workspace_id) -> list[WebhookEndpoint]:
    """The workspace's endpoints in both modes, oldest first."""
    query = (
        select(WebhookEndpoint)
        .where(WebhookEndpoint.workspace_id == workspace_id)
        .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
    )
    return list(session.execute(query).scalars())


def _parse_id(value) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None


def get_endpoint(*, session, workspace_id, endpoint_id, for_update: bool = False) -> WebhookEndpoint:
    """The endpoint, or 404: another workspace's endpoint does not exist for this one."""
    parsed = _parse_id(endpoint_id)
    if parsed is not None:
        query = select(WebhookEndpoint).where(WebhookEndpoint.id == parsed, WebhookEndpoint.workspace_id == workspace_id)
        if for_update:
            # Locked rows are read afresh: a session that loaded them earlier must not
            # decide on what it saw before the lock.
            query = query.with_for_update().execution_options(populate_existing=True)
        endpoint = session.execute(query).scalar_one_or_none()
        if endpoint is not None:
            return endpoint
    raise ApiError.not_found("webhook endpoint", endpoint_id)


def _fail_pending(session, endpoint_id, *, code: str, message: str, now, keep=None) -> None:
    query = (
        update(WebhookDelivery)
        .where(WebhookDelivery.endpoint_id == endpoint_id, WebhookDelivery.status == PENDING)
        .values(status=FAILED, next_attempt_at=None, last_error_code=code, last_error_message=message, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    if keep is not None:
        query = query.where(WebhookDelivery.id != keep)
    session.execute(query)


def _disable(session, endpoint: WebhookEndpoint, reason: str, now, *, keep=None) -> None:
    endpoint.enabled = False
    endpoint.disabled_at = now
    endpoint.disabled_reason = reason
    _fail_pending(session, endpoint.id, code="endpoint_disabled", message=f"The endpoint was disabled: {reason}", now=now, keep=keep)


def set_endpoint_enabled(*, session, workspace_id, endpoint_id, enabled: bool, now=None) -> WebhookEndpoint:
    """Disabling stops deliveries (pending ones fail with endpoint_disabled); enabling
    starts a clean health record, so an endpoint re-enabled after an automatic disable
    gets a full period before it can be disabled again."""
    now = now or utcnow()
    endpoint = get_endpoint(session=session, workspace_id=workspace_id, endpoint_id=endpoint_id, for_update=True)
    if enabled and not endpoint.enabled:
        endpoint.enabled = True
        endpoint.disabled_at = endpoint.disabled_reason = None
        endpoint.consecutive_failures, endpoint.failing_since = 0, None
    elif not enabled and endpoint.enabled:
        _disable(session, endpoint, "Disabled by a user.", now)
    session.commit()
    return endpoint


def delete_endpoint(*, session, workspace_id, endpoint_id) -> None:
    """Deletes the endpoint and, with it, its deliveries."""
    endpoint = get_endpoint(session=session, workspace_id=workspace_id, endpoint_id=endpoint_id, for_update=True)
    session.execute(
        WebhookDelivery.__table__.delete().where(WebhookDelivery.endpoint_id == endpoint.id)
    )
    session.delete(endpoint)
    session.commit()


# -- deliveries ---------------------------------------------------------------------

def _hand_to_queue(queue, delivery_id) -> None:
    if queue is None:
        return
    try:
        queue.enqueue(DELIVER_JOB, str(delivery_id), job_id=f"webhook-delivery-{delivery_id}-{uuid.uuid4()}")
    except Exception:  # noqa: BLE001 - the delivery is stored and due: the dispatcher sends it
        logger.warning("could not queue a webhook delivery; the dispatcher will send it", exc_info=True,
                       extra={"delivery_id": str(delivery_id)})


def send_test_event(*, session, workspace_id, endpoint_id, queue=None, now=None) -> WebhookDelivery:
    """A test.ping delivery, due now: sent by the worker (at once when a queue is
    given, else by the next dispatch), or by `deliver_now`."""
    now = now or utcnow()
    endpoint = get_endpoint(session=session, workspace_id=workspace_id, endpoint_id=endpoint_id)
    delivery_id = uuid.uuid4()
    delivery = WebhookDelivery(
        id=delivery_id, workspace_id=endpoint.workspace_id, livemode=endpoint.livemode, endpoint_id=endpoint.id,
        event_id=None, event_type=TEST_PING, event_created_at=now,
        # No outbox event: the delivery's id identifies the ping.
        payload=_payload(identifier=delivery_id, type=TEST_PING, created_at=now, data={}),
        status=PENDING, attempts=0, next_attempt_at=now,
    )
    session.add(delivery)
    session.commit()
    _hand_to_queue(queue, delivery.id)
    return delivery


def list_deliveries(*, session, workspace_id, endpoint_id=None, limit: int = 50) -> list[WebhookDelivery]:
    """The workspace's deliveries (both modes), newest first."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise ApiError.field_invalid("limit", "limit must be between 1 and 100.")
    query = select(WebhookDelivery).where(WebhookDelivery.workspace_id == workspace_id)
    if endpoint_id is not None:
        endpoint = get_endpoint(session=session, workspace_id=workspace_id, endpoint_id=endpoint_id)
        query = query.where(WebhookDelivery.endpoint_id == endpoint.id)
    query = query.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.event_created_at.desc(), WebhookDelivery.id.desc())
    return list(session.execute(query.limit(limit)).scalars())


def get_delivery(*, session, workspace_id, delivery_id, for_update: bool = False) -> WebhookDelivery:
    parsed = _parse_id(delivery_id)
    if parsed is not None:
        query = select(WebhookDelivery).where(WebhookDelivery.id == parsed, WebhookDelivery.workspace_id == workspace_id)
        if for_update:
            # Locked rows are read afresh: a session that loaded them earlier must not
            # decide on what it saw before the lock.
            query = query.with_for_update().execution_options(populate_existing=True)
        delivery = session.execute(query).scalar_one_or_none()
        if delivery is not None:
            return delivery
    raise ApiError.not_found("webhook delivery", delivery_id)


def resend_delivery(*, session, workspace_id, delivery_id, queue=None, now=None) -> WebhookDelivery:
    """The same delivery, pending again and due now, with a fresh retry window."""
    now = now or utcnow()
    delivery = get_delivery(session=session, workspace_id=workspace_id, delivery_id=delivery_id, for_update=True)
    endpoint = session.get(WebhookEndpoint, delivery.endpoint_id, populate_existing=True)
    if not endpoint.enabled and delivery.event_type != TEST_PING:
        raise ApiError.conflict("The endpoint is disabled; enable it before resending its deliveries.")
    if delivery.status != PENDING:
        delivery.give_up_at = None  # the next attempt opens a new window
    delivery.status = PENDING
    delivery.next_attempt_at = now
    session.commit()
    _hand_to_queue(queue, delivery.id)
    return delivery


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
        "X-Service-Signature": signature_header(secret, int(time.time()), body),
    }
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        response = client.post(url, headers=headers, content=body)
    except ResponseTooLarge as exc:
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
    """Exponential backoff with +-20% jitter, so endpoints that failed together do
    not all come back at the same moment."""
    base = settings.webhook_retry_base_seconds * 2 ** max(0, attempts - 1)
    seconds = min(base, settings.webhook_retry_max_seconds) * rng.uniform(0.8, 1.2)
    return dt.timedelta(seconds=seconds)


def _claim_delivery(session, delivery_id, *, now, lease: dt.timedelta) -> str | None:
    token = str(uuid.uuid4())
    result = session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.status == PENDING,
            WebhookDelivery.next_attempt_at <= now,
            or_(WebhookDelivery.lease_until.is_(None), WebhookDelivery.lease_until < now),
        )
        .values(lease_until=now + lease, claim_token=token)
        .execution_options(synchronize_session=False)
    )
    return token if result.rowcount == 1 else None


def _record(session, delivery: WebhookDelivery, endpoint: WebhookEndpoint, outcome: Outcome, now, settings) -> None:
    test = delivery.event_type == TEST_PING
    delivery.attempts += 1
    delivery.first_attempt_at = delivery.first_attempt_at or now
    delivery.last_attempt_at = now
    if delivery.give_up_at is None:
        delivery.give_up_at = now + dt.timedelta(seconds=settings.webhook_retry_window_seconds)
    delivery.lease_until = delivery.claim_token = None
    delivery.response_status = outcome.status_code
    delivery.latency_ms = outcome.latency_ms
    if outcome.succeeded:
        delivery.status = SUCCEEDED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
        delivery.last_error_code = delivery.last_error_message = None
        if not test:
            endpoint.consecutive_failures, endpoint.failing_since = 0, None
            endpoint.last_success_at = now
        return
    delivery.last_error_code, delivery.last_error_message = outcome.error_code, outcome.error_message
    if test or not outcome.retryable or now >= delivery.give_up_at:
        delivery.status, delivery.next_attempt_at = FAILED, None
    else:
        delivery.status = PENDING
        # The last retry lands on the end of the window rather than past it.
        delivery.next_attempt_at = min(now + retry_delay(delivery.attempts, settings), delivery.give_up_at)
    if test or not endpoint.enabled:
        return
    endpoint.consecutive_failures += 1
    endpoint.failing_since = endpoint.failing_since or now
    failing_for = now - endpoint.failing_since
    if (endpoint.consecutive_failures >= settings.webhook_disable_min_failures
            and failing_for >= dt.timedelta(seconds=settings.webhook_disable_after_seconds)):
        reason = (
            f"Disabled automatically: all {endpoint.consecutive_failures} delivery attempts since "
            f"{_timestamp(endpoint.failing_since)} failed; the last: {outcome.error_message}"
        )
        delivery.status, delivery.next_attempt_at = FAILED, None
        _disable(session, endpoint, reason, now, keep=delivery.id)
        logger.warning("webhook endpoint disabled", extra={"endpoint_id": str(endpoint.id)})


def deliver_now(*, database, delivery_id, settings=None, client: GuardedClient | None = None, now=None) -> WebhookDelivery | None:
    """Makes one attempt of a due delivery, synchronously, and records it. A delivery
    that is not due, or that another worker holds, is left alone (returned as it is)."""
    settings = _settings(settings)
    client = client or _client(settings)
    parsed = _parse_id(delivery_id)
    if parsed is None:
        raise ApiError.not_found("webhook delivery", delivery_id)
    started = now or utcnow()
    lease = dt.timedelta(seconds=max(settings.webhook_lease_seconds, settings.webhook_timeout_seconds * 3))
    with database.transaction() as session:
        token = _claim_delivery(session, parsed, now=started, lease=lease)
        delivery = session.get(WebhookDelivery, parsed)
        if token is None:
            return delivery
        endpoint = session.get(WebhookEndpoint, delivery.endpoint_id)
        if not endpoint.enabled and delivery.event_type != TEST_PING:
            delivery.status, delivery.next_attempt_at = FAILED, None
            delivery.lease_until = delivery.claim_token = None
            delivery.last_error_code = "endpoint_disabled"
            delivery.last_error_message = f"The endpoint was disabled: {endpoint.disabled_reason}"
            return delivery
        url, encrypted_secret = endpoint.url, endpoint.secret_encrypted
        event_type, body = delivery.event_type, delivery.payload.encode()
    # No transaction is held while the receiver takes its time.
    try:
        secret = _decrypt_secret(encrypted_secret)
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
        delivery = session.execute(select(WebhookDelivery).where(WebhookDelivery.id == parsed).with_for_update()).scalar_one_or_none()
        if delivery is None or delivery.claim_token != token:
            # Deleted meanwhile, or our lease ran out and another attempt took over.
            return delivery
        endpoint = session.execute(
            select(WebhookEndpoint).where(WebhookEndpoint.id == delivery.endpoint_id).with_for_update()
        ).scalar_one()
        _record(session, delivery, endpoint, outcome, finished, settings)
    return delivery


# -- fan-out ----------------------------------------------------------------------------

def _insert(session, model):
    dialect = session.bind.dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model)


def fan_out_events(*, database, settings=None, now=None, limit: int | None = None) -> int:
    """Turns new outbox events into deliveries; returns how many deliveries it made.
    Safe to run in any number of workers at once."""
    settings = _settings(settings)
    now = now or utcnow()
    limit = limit or settings.webhook_batch_size
    oldest = now - dt.timedelta(seconds=settings.webhook_retry_window_seconds)
    with database.transaction() as session:
        newest_done = session.execute(select(func.max(WebhookFanOut.event_created_at))).scalar()
        floor = oldest if newest_done is None else max(oldest, newest_done - FANOUT_LOOKBACK)
        # Without their data: most events (a burst of publications) go to no endpoint.
        query = (
            select(Event.id, Event.created_at, Event.workspace_id, Event.livemode, Event.type)
            .where(Event.created_at >= floor, ~exists().where(WebhookFanOut.event_id == Event.id))
            .order_by(Event.created_at, Event.id)
            .limit(limit)
        )
        if session.bind.dialect.name == "postgresql":
            # Another worker's batch is skipped, not waited for.
            query = query.with_for_update(skip_locked=True, of=Event)
        events = session.execute(query).all()
        if not events:
            return 0
        # Marked in one statement; an event another worker marked first is theirs.
        marked = set(session.execute(
            _insert(session, WebhookFanOut)
            .values([dict(event_id=event.id, event_created_at=event.created_at, created_at=now) for event in events])
            .on_conflict_do_nothing(index_elements=["event_id"])
            # rowcount is not reliable for ORM-enabled inserts; returned rows are.
            .returning(WebhookFanOut.event_id)
        ).scalars())
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
                payload=_payload(identifier=event.id, type=event.type, created_at=event.created_at, data=data[event.id]),
                status=PENDING, attempts=0, next_attempt_at=now, created_at=now, updated_at=now,
            )
            for event, receivers in wanted
            for endpoint in receivers
        ]
        created = 0
        for start in range(0, len(rows), 500):
            created += len(session.execute(
                _insert(session, WebhookDelivery).values(rows[start:start + 500])
                .on_conflict_do_nothing(index_elements=["endpoint_id", "event_id"])
                .returning(WebhookDelivery.id)
            ).all())
    return created


# -- dispatch: one sender per endpoint ----------------------------------------------------

def _due(now):
    return and_(
        WebhookDelivery.status == PENDING,
        WebhookDelivery.next_attempt_at <= now,
        or_(WebhookDelivery.lease_until.is_(None), WebhookDelivery.lease_until < now),
    )


def claim_endpoints(session, *, now, lease: dt.timedelta, limit: int) -> list[tuple[uuid.UUID, str]]:
    """Leases endpoints that have due deliveries and no sender; commits."""
    free = or_(WebhookEndpoint.lease_until.is_(None), WebhookEndpoint.lease_until < now)
    has_due = exists().where(WebhookDelivery.endpoint_id == WebhookEndpoint.id, _due(now))
    query = select(WebhookEndpoint.id).where(free, has_due).order_by(WebhookEndpoint.lease_until).limit(limit)
    if session.bind.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=WebhookEndpoint)
    ids = list(session.execute(query).scalars())
    if not ids:
        session.commit()
        return []
    token = str(uuid.uuid4())
    claimed = session.execute(
        update(WebhookEndpoint)
        .where(WebhookEndpoint.id.in_(ids), free)
        .values(lease_until=now + lease, claim_token=token)
        .returning(WebhookEndpoint.id)
        .execution_options(synchronize_session=False)
    ).scalars().all()
    session.commit()
    return [(endpoint_id, token) for endpoint_id in claimed]


def _release(session, endpoint_id, token) -> None:
    session.execute(
        update(WebhookEndpoint)
        .where(WebhookEndpoint.id == endpoint_id, WebhookEndpoint.claim_token == token)
        .values(lease_until=None, claim_token=None)
        .execution_options(synchronize_session=False)
    )


def dispatch_deliveries(*, database, queue, settings=None, now=None) -> int:
    """Hands each endpoint with due deliveries to one `deliver_webhooks` job; returns
    how many it handed out. This is also the retry sweep: a delivery whose backoff has
    passed is simply due again."""
    settings = _settings(settings)
    now = now or utcnow()
    lease = dt.timedelta(seconds=settings.webhook_lease_seconds)
    with database.transaction() as session:
        claims = claim_endpoints(session, now=now, lease=lease, limit=settings.webhook_batch_size)
    handed = 0
    for endpoint_id, token in claims:
        try:
            queue.enqueue(ENDPOINT_JOB, str(endpoint_id), token, job_id=f"webhook-endpoint-{endpoint_id}-{token}")
            handed += 1
        except Exception:  # noqa: BLE001 - give the claim back so the next tick retries
            logger.warning("could not queue webhook deliveries", exc_info=True, extra={"endpoint_id": str(endpoint_id)})
            with database.transaction() as session:
                _release(session, endpoint_id, token)
    return handed


def run_endpoint(*, database, endpoint_id, token, settings=None, client: GuardedClient | None = None, now=None) -> int:
    """Sends an endpoint's due deliveries one at a time, oldest event first, while the
    endpoint's lease is ours; returns how many attempts it made. Stops after half a
    lease or a batch, leaving the rest to the next dispatch."""
    settings = _settings(settings)
    client = client or _client(settings)
    parsed = _parse_id(endpoint_id)
    lease = dt.timedelta(seconds=settings.webhook_lease_seconds)
    deadline = time.monotonic() + settings.webhook_lease_seconds / 2
    attempted = 0
    try:
        while attempted < settings.webhook_batch_size and time.monotonic() < deadline:
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
            deliver_now(database=database, delivery_id=next_id, settings=settings, client=client, now=now)
            attempted += 1
    finally:
        with database.transaction() as session:
            _release(session, parsed, token)
    return attempted
