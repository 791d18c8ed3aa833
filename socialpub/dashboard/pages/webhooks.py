"""Developers -> Webhooks: endpoints, their signing secrets and delivery logs."""
from __future__ import annotations

from flask import current_app, flash, g, redirect, render_template, request, url_for

from persistence.webhooks import DeliveryStatus
from socialpub.dashboard import auth
from socialpub.dashboard.forms import WebhookCreateForm
from socialpub.dashboard.plumbing import attach, blueprint
from socialpub.dashboard.reveal import reveal_next, take_revealed
from socialpub.errors import ApiError
from socialpub.request import current_session
from socialpub.webhooks import endpoints as webhooks


def _webhooks_page(form=None, status=200):
    db = current_session()
    endpoints = webhooks.list_endpoints(session=db, workspace_id=g.workspace.id)
    deliveries = webhooks.list_deliveries(session=db, workspace_id=g.workspace.id, limit=50)
    return render_template(
        "dashboard/webhooks.html", endpoints=endpoints, deliveries=deliveries, form=form or WebhookCreateForm(),
        endpoint_urls={endpoint.id: endpoint.url for endpoint in endpoints},
    ), status


def _endpoint_page(endpoint_id):
    db = current_session()
    endpoint = webhooks.get_endpoint(session=db, workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    revealed = take_revealed("webhook_secret", endpoint=str(endpoint.id))
    secret = revealed and revealed["secret"]
    deliveries = webhooks.list_deliveries(session=db, workspace_id=g.workspace.id, endpoint_id=endpoint.id, limit=50)
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


@blueprint.get("/developers/webhooks")
@auth.sign_in_required
def webhooks_list():
    return _webhooks_page()


@blueprint.post("/developers/webhooks")
@auth.sign_in_required
def webhooks_create():
    form = WebhookCreateForm(request.form)
    if not form.validate():
        return _webhooks_page(form, 422)
    try:
        endpoint, secret = webhooks.create_endpoint(
            session=current_session(), workspace_id=g.workspace.id, livemode=form.mode.data == "live",
            url=form.url.data, description=form.description.data or None, event_types=form.chosen_event_types(),
        )
    except ApiError as error:
        if error.status != 422:
            raise
        attach(form, error)
        return _webhooks_page(form, 422)
    reveal_next("webhook_secret", endpoint=str(endpoint.id), secret=secret)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=endpoint.id), 303)


@blueprint.get("/developers/webhooks/<endpoint_id>")
@auth.sign_in_required
def webhook_detail(endpoint_id):
    return _endpoint_page(endpoint_id)


@blueprint.post("/developers/webhooks/<endpoint_id>/test")
@auth.sign_in_required
def webhook_test(endpoint_id):
    runtime = current_app.extensions["socialpub"]
    delivery = webhooks.send_test_event_now(
        session=current_session(), database=runtime.database, settings=runtime.settings, workspace_id=g.workspace.id,
        endpoint_id=endpoint_id,
    )
    _flash_outcome(delivery)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id if delivery else endpoint_id), 303)


@blueprint.post("/developers/webhooks/<endpoint_id>/<any(enable, disable):action>")
@auth.sign_in_required
def webhook_enable(endpoint_id, action):
    endpoint = webhooks.set_endpoint_enabled(
        session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id, enabled=action == "enable"
    )
    flash(f"{'Enabled' if endpoint.enabled else 'Disabled'} the endpoint {endpoint.url}.", "info")
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=endpoint.id), 303)


@blueprint.post("/developers/webhooks/<endpoint_id>/delete")
@auth.sign_in_required
def webhook_delete(endpoint_id):
    endpoint = webhooks.delete_endpoint(session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    flash(f"Deleted the endpoint {endpoint.url} and its delivery log.", "info")
    return redirect(url_for("dashboard.webhooks_list"), 303)


@blueprint.post("/developers/webhooks/deliveries/<delivery_id>/resend")
@auth.sign_in_required
def webhook_resend(delivery_id):
    runtime = current_app.extensions["socialpub"]
    try:
        delivery = webhooks.resend_delivery_now(
            session=current_session(), database=runtime.database, settings=runtime.settings,
            workspace_id=g.workspace.id, delivery_id=delivery_id,
        )
    except ApiError as error:
        if error.status != 409:
            raise
        flash(error.message, "error")
        # Refused (its endpoint is disabled): back to that endpoint's page to enable it.
        delivery = webhooks.get_delivery(session=current_session(), workspace_id=g.workspace.id, delivery_id=delivery_id)
    else:
        _flash_outcome(delivery)
        if delivery is None:
            return redirect(url_for("dashboard.webhooks_list"), 303)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id), 303)
