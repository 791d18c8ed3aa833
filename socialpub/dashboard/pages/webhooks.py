"""Developers -> Webhooks: endpoints, their signing secrets and delivery logs."""
from __future__ import annotations

from flask import current_app, flash, g, render_template

from persistence.webhooks import DeliveryStatus
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import WebhookCreateForm
from socialpub.dashboard.plumbing import done, form_page, member_page, see_other
from socialpub.dashboard.reveal import reveal_next, take_revealed
from socialpub.errors import ApiError
from socialpub.request import current_session
from socialpub.security_events import security_event
from socialpub.webhooks import endpoints as webhooks


def _endpoint_page(endpoint_id):
    db = current_session()
    endpoint = webhooks.get_endpoint(session=db, actor=acting_member(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    revealed = take_revealed("webhook_secret", endpoint=str(endpoint.id))
    secret = revealed and revealed["secret"]
    deliveries = webhooks.list_deliveries(session=db, actor=acting_member(), workspace_id=g.workspace.id, endpoint_id=endpoint.id, limit=50)
    return render_template("dashboard/webhook.html", endpoint=endpoint, deliveries=deliveries, secret=secret)


def _flash_outcome(delivery) -> None:
    """What the attempt made within the request came to (none if the delivery vanished first)."""
    if delivery is None:
        return
    if delivery.status == DeliveryStatus.SUCCEEDED:
        flash(f"Delivered {delivery.event_type}: the endpoint answered {delivery.response_status} in {delivery.latency_ms} ms.", "info")
    else:
        reason = delivery.last_error_message or (f"HTTP {delivery.response_status}" if delivery.response_status else "no answer")
        flash(f"The {delivery.event_type} delivery did not succeed: {reason}", "error")


def _create(form):
    endpoint, secret = webhooks.create_endpoint(
        session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, livemode=form.mode.data == "live",
        url=form.url.data, description=form.description.data or None, event_types=form.chosen_event_types(),
    )
    security_event("webhook.created", target_id=str(endpoint.id), livemode=endpoint.livemode)
    reveal_next("webhook_secret", endpoint=str(endpoint.id), secret=secret)
    return see_other("dashboard.webhook_detail", endpoint_id=endpoint.id)


@form_page("/developers/webhooks", WebhookCreateForm, _create)
def webhooks_list(form=None):
    db = current_session()
    endpoints = webhooks.list_endpoints(session=db, actor=acting_member(), workspace_id=g.workspace.id)
    deliveries = webhooks.list_deliveries(session=db, actor=acting_member(), workspace_id=g.workspace.id, limit=50)
    return render_template(
        "dashboard/webhooks.html", endpoints=endpoints, deliveries=deliveries, form=form or WebhookCreateForm(),
        endpoint_urls={endpoint.id: endpoint.url for endpoint in endpoints},
    )


@member_page("/developers/webhooks/<endpoint_id>")
def webhook_detail(endpoint_id):
    return _endpoint_page(endpoint_id)


@member_page("/developers/webhooks/<endpoint_id>/test", methods=["POST"])
def webhook_test(endpoint_id):
    runtime = current_app.extensions["socialpub"]
    delivery = webhooks.send_test_event_now(
        session=current_session(), actor=acting_member(), database=runtime.database, settings=runtime.settings, workspace_id=g.workspace.id,
        endpoint_id=endpoint_id,
    )
    security_event("webhook.tested", target_id=str(delivery.endpoint_id if delivery else endpoint_id),
                   delivery_id=str(delivery.id) if delivery else None)
    _flash_outcome(delivery)
    return see_other("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id if delivery else endpoint_id)


@member_page("/developers/webhooks/<endpoint_id>/<any(enable, disable):action>", methods=["POST"])
def webhook_enable(endpoint_id, action):
    endpoint = webhooks.set_endpoint_enabled(
        session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, endpoint_id=endpoint_id, enabled=action == "enable"
    )
    security_event(f"webhook.{action}d", target_id=str(endpoint.id))
    return done(
        f"{'Enabled' if endpoint.enabled else 'Disabled'} the endpoint {endpoint.url}.",
        "dashboard.webhook_detail", endpoint_id=endpoint.id,
    )


@member_page("/developers/webhooks/<endpoint_id>/delete", methods=["POST"])
def webhook_delete(endpoint_id):
    endpoint = webhooks.delete_endpoint(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    security_event("webhook.deleted", target_id=str(endpoint.id))
    return done(f"Deleted the endpoint {endpoint.url} and its delivery log.", "dashboard.webhooks_list")


@member_page("/developers/webhooks/deliveries/<delivery_id>/resend", methods=["POST"])
def webhook_resend(delivery_id):
    runtime = current_app.extensions["socialpub"]
    try:
        delivery = webhooks.resend_delivery_now(
            session=current_session(), actor=acting_member(), database=runtime.database, settings=runtime.settings,
            workspace_id=g.workspace.id, delivery_id=delivery_id,
        )
    except ApiError as error:
        if error.status != 409:
            raise
        flash(error.message, "error")
        # Refused (its endpoint is disabled): back to that endpoint's page to enable it.
        delivery = webhooks.get_delivery(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, delivery_id=delivery_id)
    else:
        security_event("webhook.resent", target_id=delivery_id,
                       endpoint_id=str(delivery.endpoint_id) if delivery else None)
        _flash_outcome(delivery)
        if delivery is None:
            return see_other("dashboard.webhooks_list")
    return see_other("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id)
