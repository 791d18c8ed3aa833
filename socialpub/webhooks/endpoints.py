"""A workspace's webhook endpoints and their delivery log, as the dashboard and the
CLI manage them: both modes of one workspace, through its TenantScope, so another
workspace's endpoint or delivery is simply not found.

Test pings are sent once, without retries, and do not count toward an endpoint's
health; they may be sent to a disabled endpoint, to check a fix before enabling it.

Resend makes the same delivery pending again (same id in `X-Service-Delivery`, same
body), with a fresh retry window; attempts keep counting.
"""
from __future__ import annotations

import logging
import uuid

import httpx

from persistence.types import utcnow
from persistence.webhooks import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from persistence.workspaces import Workspace
from socialpub.errors import ApiError
from socialpub.events.service import EVENT_TYPES
from socialpub.outbound import Allowlist, host_problem
from socialpub.tenancy import Actor, TenantScope
from socialpub.webhooks.deliveries import TEST_PING, deliver_now, disable_endpoint
from socialpub.webhooks.jobs import deliver_webhook
from socialpub.webhooks.signing import SHOWN_PREFIX_LENGTH, encrypt_secret, new_secret, payload

logger = logging.getLogger("socialpub.webhooks")

MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 500


# -- input --------------------------------------------------------------------------

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
    # Stored and listed as given, so a password in it would be shown to everyone who
    # can read the endpoint (and sent in every delivery's Authorization header).
    if parsed.userinfo:
        raise ApiError.field_invalid(
            "url", "Credentials in the URL (user:password@) are not accepted; use a URL without them, "
            "or a secret path, and check the signature of each delivery.",
        )
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
        raise ApiError.field_invalid("event_types", "List at least one event type, or omit it to receive every type.")
    chosen = []
    for event_type in event_types:
        if event_type not in EVENT_TYPES:
            raise ApiError.field_invalid(
                "event_types", f"Unknown event type {event_type!r}; known types: {', '.join(EVENT_TYPES)}."
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


# -- endpoints ----------------------------------------------------------------------

def create_endpoint(*, session, actor: Actor, workspace_id, livemode: bool, url: str, description: str | None,
                    event_types: list[str] | None) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its signing secret, which is not shown again."""
    url = _check_url(url, livemode=livemode)
    event_types = _check_event_types(event_types)
    description = _check_description(description)
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    secret = new_secret()
    endpoint = WebhookEndpoint(
        url=url, description=description, event_types=event_types, secret_encrypted=encrypt_secret(secret),
        secret_prefix=secret[:SHOWN_PREFIX_LENGTH], enabled=True, consecutive_failures=0,
    )
    scope.add(endpoint, livemode=bool(livemode))
    session.commit()
    return endpoint, secret


def list_endpoints(*, session, actor: Actor, workspace_id) -> list[WebhookEndpoint]:
    """The workspace's endpoints in both modes, oldest first."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    query = scope.select(WebhookEndpoint).order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
    return list(session.execute(query).scalars())


def _endpoint(scope: TenantScope, endpoint_id, *, for_update: bool = False) -> WebhookEndpoint:
    return scope.get(WebhookEndpoint, endpoint_id, resource="webhook endpoint", for_update=for_update)


def get_endpoint(*, session, actor: Actor, workspace_id, endpoint_id) -> WebhookEndpoint:
    """The endpoint, or 404: another workspace's endpoint does not exist for this one."""
    return _endpoint(TenantScope.workspace(session, workspace_id, actor=actor), endpoint_id)


def set_endpoint_enabled(*, session, actor: Actor, workspace_id, endpoint_id, enabled: bool, now=None) -> WebhookEndpoint:
    """Disabling stops deliveries (pending ones fail with endpoint_disabled); enabling
    starts a clean health record, so an endpoint re-enabled after an automatic disable
    gets a full period before it can be disabled again."""
    now = now or utcnow()
    endpoint = _endpoint(TenantScope.workspace(session, workspace_id, actor=actor), endpoint_id, for_update=True)
    if enabled and not endpoint.enabled:
        endpoint.enabled = True
        endpoint.disabled_at = endpoint.disabled_reason = None
        endpoint.consecutive_failures, endpoint.failing_since = 0, None
    elif not enabled and endpoint.enabled:
        disable_endpoint(session, endpoint, "Disabled by a user.", now)
    session.commit()
    return endpoint


def delete_endpoint(*, session, actor: Actor, workspace_id, endpoint_id) -> WebhookEndpoint:
    """Deletes the endpoint and, with it, its deliveries. Returns the deleted endpoint
    (as it was loaded), to say which one went."""
    endpoint = _endpoint(TenantScope.workspace(session, workspace_id, actor=actor), endpoint_id, for_update=True)
    session.execute(
        WebhookDelivery.__table__.delete().where(WebhookDelivery.endpoint_id == endpoint.id)
    )
    session.delete(endpoint)
    session.commit()
    return endpoint


# -- deliveries ---------------------------------------------------------------------

def _hand_to_queue(queue, delivery_id) -> None:
    if queue is None:
        return
    try:
        queue.enqueue(deliver_webhook, str(delivery_id), job_id=f"webhook-delivery-{delivery_id}-{uuid.uuid4()}")
    except Exception:  # noqa: BLE001 - the delivery is stored and due: the dispatcher sends it
        logger.warning("could not queue a webhook delivery; the dispatcher will send it", exc_info=True,
                       extra={"delivery_id": str(delivery_id)})


def send_test_event(*, session, actor: Actor, workspace_id, endpoint_id, queue=None, now=None) -> WebhookDelivery:
    """A test.ping delivery, due now: sent by the worker (at once when a queue is
    given, else by the next dispatch), or by `deliver_now`."""
    now = now or utcnow()
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    endpoint = _endpoint(scope, endpoint_id)
    delivery_id = uuid.uuid4()
    delivery = WebhookDelivery(
        id=delivery_id, endpoint_id=endpoint.id, event_id=None, event_type=TEST_PING, event_created_at=now,
        # No outbox event: the delivery's id identifies the ping.
        payload=payload(identifier=delivery_id, type=TEST_PING, created_at=now, data={}),
        status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=now,
    )
    scope.add(delivery, livemode=endpoint.livemode)
    session.commit()
    _hand_to_queue(queue, delivery.id)
    return delivery


def send_test_event_now(*, session, actor: Actor, database, settings, workspace_id, endpoint_id) -> WebhookDelivery | None:
    """A test ping attempted once within the call, so the caller sees its outcome at
    once (the outbound client's timeouts bound the wait). None when it vanished before
    its attempt (its endpoint was deleted meanwhile)."""
    delivery = send_test_event(session=session, actor=actor, workspace_id=workspace_id, endpoint_id=endpoint_id)
    return deliver_now(database=database, delivery_id=delivery.id, settings=settings)


def list_deliveries(*, session, actor: Actor, workspace_id, endpoint_id=None, limit: int = 50) -> list[WebhookDelivery]:
    """The workspace's deliveries (both modes), newest first."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise ApiError.field_invalid("limit", "limit must be between 1 and 100.")
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    query = scope.select(WebhookDelivery)
    if endpoint_id is not None:
        endpoint = _endpoint(scope, endpoint_id)
        query = query.where(WebhookDelivery.endpoint_id == endpoint.id)
    query = query.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.event_created_at.desc(), WebhookDelivery.id.desc())
    return list(session.execute(query.limit(limit)).scalars())


def _delivery(scope: TenantScope, delivery_id, *, for_update: bool = False) -> WebhookDelivery:
    return scope.get(WebhookDelivery, delivery_id, resource="webhook delivery", for_update=for_update)


def get_delivery(*, session, actor: Actor, workspace_id, delivery_id) -> WebhookDelivery:
    return _delivery(TenantScope.workspace(session, workspace_id, actor=actor), delivery_id)


def resend_delivery(*, session, actor: Actor, workspace_id, delivery_id, queue=None, now=None) -> WebhookDelivery:
    """The same delivery, pending again and due now, with a fresh retry window."""
    now = now or utcnow()
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    delivery = _delivery(scope, delivery_id, for_update=True)
    # Read afresh, unlocked: whether it is enabled now, not when this session saw it.
    endpoint = session.execute(
        scope.select(WebhookEndpoint, WebhookEndpoint.id == delivery.endpoint_id).execution_options(populate_existing=True)
    ).scalar_one()
    if not endpoint.enabled and delivery.event_type != TEST_PING:
        raise ApiError.conflict("The endpoint is disabled; enable it before resending its deliveries.")
    if delivery.status != DeliveryStatus.PENDING:
        delivery.give_up_at = None  # the next attempt opens a new window
    delivery.status = DeliveryStatus.PENDING
    delivery.next_attempt_at = now
    session.commit()
    _hand_to_queue(queue, delivery.id)
    return delivery


def resend_delivery_now(*, session, actor: Actor, database, settings, workspace_id, delivery_id) -> WebhookDelivery | None:
    """`resend_delivery`, then one attempt within the call (retries, if needed, go to
    the workers). None when the delivery vanished before its attempt."""
    delivery = resend_delivery(session=session, actor=actor, workspace_id=workspace_id, delivery_id=delivery_id)
    return deliver_now(database=database, delivery_id=delivery.id, settings=settings)
