"""`socialpub webhook add|list|test|enable|disable|delete`: webhook endpoints. The
signing secret is printed once; `test` sends a signed test.ping and prints what
happened."""
from __future__ import annotations

from persistence.webhooks import DeliveryStatus, WebhookEndpoint
from socialpub.cli.common import (
    MODES, OPERATOR, add_command, add_noun, add_workspace_command, database, emit, emit_gone, mode_name, parse_uuid,
    require_workspace,
)
from socialpub.errors import ApiError
from socialpub.webhooks import deliveries
from socialpub.webhooks import endpoints as webhooks


def _webhook_row(endpoint) -> dict:
    return {
        "id": str(endpoint.id),
        "url": endpoint.url,
        "mode": mode_name(endpoint.livemode),
        "events": endpoint.event_types,
        "description": endpoint.description,
        "enabled": endpoint.enabled,
        "disabledReason": endpoint.disabled_reason,
        "secretPrefix": endpoint.secret_prefix,
        "createdAt": endpoint.created_at.isoformat(),
    }


def _webhook_endpoint(session, endpoint_id):
    """The endpoint and its workspace: the operator names an endpoint by id alone."""
    endpoint = session.get(WebhookEndpoint, parse_uuid(endpoint_id))
    if endpoint is None:
        raise ApiError.not_found("webhook endpoint", endpoint_id)
    return endpoint


def add(args, settings):
    events = None
    if args.events is not None:
        events = [name.strip() for name in args.events.split(",") if name.strip()]
    with database(settings).transaction() as session:
        endpoint, secret = webhooks.create_endpoint(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), livemode=args.mode == "live", url=args.url,
            description=args.description, event_types=events,
        )
        payload = {"id": str(endpoint.id), "secret": secret}
    emit(args, payload, f"Added webhook endpoint {payload['id']}. Its signing secret is shown once:\n{secret}")


def list_endpoints(args, settings):
    workspace_id = parse_uuid(args.workspace)
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        rows = [_webhook_row(endpoint) for endpoint in webhooks.list_endpoints(session=session, actor=OPERATOR, workspace_id=workspace_id)]
    text = "\n".join(
        f"{r['id']}  {r['mode']}  {'enabled ' if r['enabled'] else 'disabled'}  {r['url']}  {','.join(r['events'] or ['*'])}"
        for r in rows
    )
    emit(args, {"endpoints": rows}, text or "No webhook endpoints.")


def test(args, settings):
    handle = database(settings)
    with handle.transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        delivery = webhooks.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
    delivery = deliveries.deliver_now(database=handle, delivery_id=delivery.id, settings=settings)
    payload = {
        "delivery": str(delivery.id),
        "status": delivery.status,
        "responseCode": delivery.response_status,
        "latencyMs": delivery.latency_ms,
        "error": delivery.last_error_message,
    }
    outcome = f"answered {delivery.response_status}" if delivery.response_status is not None else delivery.last_error_message
    emit(args, payload, f"test.ping {delivery.status}: {outcome} ({delivery.latency_ms} ms), delivery {delivery.id}")
    # Scripts check an endpoint with this: one that did not take the event fails the command.
    return 0 if delivery.status == DeliveryStatus.SUCCEEDED else 1


def _set_enabled(args, settings, enabled: bool):
    with database(settings).transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        endpoint = webhooks.set_endpoint_enabled(
            session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id, enabled=enabled
        )
        payload = _webhook_row(endpoint)
    emit(args, payload, f"{'Enabled' if enabled else 'Disabled'} webhook endpoint {payload['id']}.")


def enable(args, settings):
    _set_enabled(args, settings, True)


def disable(args, settings):
    _set_enabled(args, settings, False)


def delete(args, settings):
    with database(settings).transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        webhooks.delete_endpoint(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
    emit_gone(args, endpoint, "deleted", "webhook endpoint")


def register(commands) -> None:
    actions = add_noun(commands, "webhook", help="webhook endpoints")

    command = add_workspace_command(actions, "add", help="add an endpoint; prints its signing secret once", run=add)
    command.add_argument("--url", required=True)
    command.add_argument("--mode", choices=MODES, default="test")
    command.add_argument("--events", help="comma-separated event types (default: every type)")
    command.add_argument("--description")

    add_workspace_command(actions, "list", help="list a workspace's endpoints", run=list_endpoints)

    for name, run, help_text in (
        ("test", test, "send test.ping now and print the outcome (status 1 if it was not taken)"),
        ("enable", enable, "enable an endpoint again (with a clean failure record)"),
        ("disable", disable, "disable an endpoint; its pending deliveries fail"),
        ("delete", delete, "delete an endpoint"),
    ):
        command = add_command(actions, name, help=help_text, run=run)
        command.add_argument("endpoint_id")
