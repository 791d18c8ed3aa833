"""Dashboard views: parse the form, call one service function, render or redirect.

A POST that makes a secret (a new or rolled key's value, a webhook signing secret)
redirects to the page that shows it, so reloading that page cannot submit the form
again (rolling a second time would end the value just shown). The secret waits for
that page in the session, encrypted (the session cookie is signed, not secret), and
is forgotten as it is shown. The session lives in the cookie, so a copy of the
cookie from before the page was shown, replayed within REVEAL_SECONDS, shows it
again; whoever holds that copy is signed in as the member anyway. Every dashboard
response is `Cache-Control: no-store`.
"""
from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

from flask import Blueprint, flash, g, redirect, render_template, request, session, url_for
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from socialpub import crypto
from socialpub.dashboard import auth, csrf
from socialpub.dashboard.forms import (
    AccountConnectForm, BrandContextForm, KeyCreateForm, KeyRollForm, SignInForm, scope_areas,
)
from socialpub.error_handlers import DATABASE_DOWN, QUEUE_DOWN
from socialpub.errors import ApiError
from socialpub.request import current_session
from socialpub.accounts import service as accounts
from socialpub.keys import service as api_keys
from socialpub.ai import brand_context
from socialpub.members import service as members

logger = logging.getLogger("socialpub.dashboard")
blueprint = Blueprint(
    "dashboard", __name__, template_folder="templates", static_folder="static", static_url_path="/static"
)
# Service field names (the API's camelCase) -> form field names, to put a service's
# refusal next to the input it is about.
FORM_FIELDS = {
    "perMinute": "per_minute", "perDay": "per_day", "expiresInDays": "expires_in_days", "graceHours": "grace_hours",
    "bannedWords": "banned_words", "samplePosts": "sample_posts", "options": None,
}


# -- plumbing -----------------------------------------------------------------------

@blueprint.before_request
def _before():
    if request.method == "POST":
        csrf.protect()
    auth.load_member()


@blueprint.after_request
def _headers(response):
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Content-Security-Policy"] = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    return response


def render_error(status: int, message: str | None, headers: dict | None = None):
    titles = {400: "Bad request", 401: "Sign-in refused", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
              409: "Conflict", 413: "Too large", 422: "Check the form", 429: "Too many attempts", 503: "Unavailable"}
    title = titles.get(status, "Something went wrong")
    body = render_template("dashboard/error.html", title=title, message=message or title, status=status,
                           member=getattr(g, "member", None))
    return body, status, headers or {}


@blueprint.errorhandler(CSRFError)
def _csrf_error(exc):
    return render_error(400, "This form was not sent from a current dashboard page (its security token is missing or "
                             "out of date). Reload the page and try again; nothing was changed.")


@blueprint.errorhandler(ApiError)
def _api_error(exc: ApiError):
    if exc.status >= 500:
        logger.error("%s: %s", exc.code, exc.message)
    return render_error(exc.status, exc.message, {k: v for k, v in exc.headers.items() if k == "Retry-After"})


@blueprint.errorhandler(HTTPException)
def _http_error(exc: HTTPException):
    headers = {"Allow": ", ".join(exc.valid_methods)} if getattr(exc, "valid_methods", None) else None
    return render_error(exc.code or 500, exc.description, headers)


def _dependency_down(exc):
    logger.warning("dashboard: %s unavailable on %s", exc.__class__.__name__, request.path)
    return _api_error(ApiError.service_unavailable("The database" if isinstance(exc, DATABASE_DOWN) else "The job queue"))


for _down in DATABASE_DOWN + QUEUE_DOWN:
    blueprint.register_error_handler(_down, _dependency_down)


@blueprint.errorhandler(Exception)
def _unexpected(exc):
    logger.error("dashboard: unhandled exception on %s", request.path, exc_info=exc)
    return render_error(500, "Something went wrong on our side; nothing you did caused it. Try again in a moment.")


@blueprint.app_template_filter("when")
def _when(value):
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


@blueprint.app_context_processor
def _context():
    return {"member": getattr(g, "member", None), "workspace": getattr(g, "workspace", None)}


def _attach(form, error: ApiError) -> None:
    """Puts a service's field refusal on the form's matching field, else on the form."""
    for detail in error.details or [{"field": None, "message": error.message}]:
        name = FORM_FIELDS.get(detail["field"], detail["field"])
        if name and name in form._fields:
            form[name].errors = list(form[name].errors or []) + [detail["message"]]
        else:
            form.form_errors.append(detail["message"])


def _safe_next(target: str | None) -> str:
    """Only a dashboard path of this site: never an open redirect."""
    if target:
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc and parts.path.startswith("/dashboard") and not target.startswith("//"):
            return target.rstrip("?")
    return url_for("dashboard.overview")


REVEAL = "reveal"
# A secret not picked up by the page it was meant for within this long is dropped
# rather than shown on some later visit; short, since a copied cookie could replay it.
REVEAL_SECONDS = 60


def _reveal_next(kind: str, **values) -> None:
    session[REVEAL] = crypto.encrypt_json({"kind": kind, "at": time.time(), **values})


def _take_revealed(kind: str, **match) -> dict | None:
    """The secret waiting for this page, forgotten as it is returned."""
    token = session.get(REVEAL)
    if token is None:
        return None
    try:
        values = crypto.decrypt_json(token)
    except crypto.UndecryptableSecret:  # the encryption keys changed since
        session.pop(REVEAL)
        return None
    if values.get("kind") != kind or any(values.get(name) != value for name, value in match.items()):
        return None
    session.pop(REVEAL)
    return values if time.time() - values["at"] <= REVEAL_SECONDS else None


@blueprint.route("/<path:unknown>", methods=["GET", "POST"])
def not_found(unknown):
    return render_error(404, "There is no dashboard page at this address.")


# -- signing in -----------------------------------------------------------------------

@blueprint.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    if g.member is not None:
        return redirect(_safe_next(request.args.get("next")))
    form = SignInForm(request.form)
    if request.method == "GET":
        return render_template("dashboard/sign_in.html", form=form)
    if not form.validate():
        return render_template("dashboard/sign_in.html", form=form), 422
    refusal = auth.sign_in_limiter().attempt(form.email.data, request.remote_addr)
    if refusal is not None:
        minutes = max(1, round(refusal.retry_after / 60))
        form.form_errors.append(
            f"Too many sign-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )
        return render_template("dashboard/sign_in.html", form=form), 429, {"Retry-After": str(refusal.retry_after)}
    try:
        member = members.authenticate(session=current_session(), email=form.email.data, password=form.password.data)
    except members.SignInRefused:
        form.form_errors.append("That email and password do not match a member.")
        return render_template("dashboard/sign_in.html", form=form), 401
    auth.sign_in_limiter().succeeded(form.email.data)
    auth.start_session(member)
    return redirect(_safe_next(request.args.get("next")))


@blueprint.post("/sign-out")
def sign_out():
    auth.sign_out()
    flash("You are signed out.", "info")
    return redirect(url_for("dashboard.sign_in"))


@blueprint.get("/")
@auth.sign_in_required
def overview():
    db = current_session()
    keys = api_keys.list_api_keys(session=db, workspace_id=g.workspace.id)
    connected = accounts.workspace_accounts(session=db, workspace_id=g.workspace.id)
    return render_template(
        "dashboard/overview.html",
        active_keys=sum(1 for key in keys if key.revoked_at is None),
        active_accounts=sum(1 for account in connected if account.status == accounts.ACTIVE),
    )


# -- API keys -------------------------------------------------------------------------

def _keys_page(*, form=None, new_key=None, status=200, error=None):
    keys = api_keys.list_api_keys(session=current_session(), workspace_id=g.workspace.id)
    rows = [(key, api_keys.current_prefix(key)) for key in reversed(keys)]
    return render_template(
        "dashboard/api_keys.html", rows=rows, form=form or KeyCreateForm(), roll_form=KeyRollForm(),
        areas=scope_areas(), new_key=new_key, error=error,
    ), status


@blueprint.get("/developers/api-keys")
@auth.sign_in_required
def api_keys_list():
    return _keys_page(new_key=_take_revealed("api_key"))


@blueprint.post("/developers/api-keys")
@auth.sign_in_required
def api_keys_create():
    form = KeyCreateForm(request.form)
    if not form.validate():
        return _keys_page(form=form, status=422)
    try:
        api_key, value = api_keys.create_api_key(
            session=current_session(), workspace_id=g.workspace.id, name=form.name.data, scopes=form.scopes.data,
            mode=form.mode.data, per_minute=form.per_minute.data, per_day=form.per_day.data,
            expires_in_days=form.expires_in_days.data,
        )
    except ApiError as error:
        if error.status != 422:
            raise
        _attach(form, error)
        return _keys_page(form=form, status=422)
    _reveal_next("api_key", name=api_key.name, value=value, action="created")
    return redirect(url_for("dashboard.api_keys_list"), 303)


@blueprint.post("/developers/api-keys/<key_id>/roll")
@auth.sign_in_required
def api_keys_roll(key_id):
    form = KeyRollForm(request.form)
    if not form.validate():
        return _keys_page(error="Choose when the old value stops working.", status=422)
    try:
        api_key, value = api_keys.roll_api_key(
            session=current_session(), api_key_id=key_id, grace_hours=float(form.grace_hours.data),
            workspace_id=g.workspace.id,
        )
    except ApiError as error:
        if error.status not in (409, 422):
            raise
        return _keys_page(error=error.message, status=error.status)
    _reveal_next("api_key", name=api_key.name, value=value, action="rolled",
                 grace=dict(form.grace_hours.choices)[form.grace_hours.data])
    return redirect(url_for("dashboard.api_keys_list"), 303)


@blueprint.post("/developers/api-keys/<key_id>/revoke")
@auth.sign_in_required
def api_keys_revoke(key_id):
    api_key = api_keys.revoke_api_key(session=current_session(), api_key_id=key_id, workspace_id=g.workspace.id)
    flash(f"Revoked the key “{api_key.name}”. Requests with it are now refused.", "info")
    return redirect(url_for("dashboard.api_keys_list"), 303)


# -- brand context --------------------------------------------------------------------

@blueprint.route("/brand-context", methods=["GET", "POST"])
@auth.sign_in_required
def brand():
    if request.method == "GET":
        context = brand_context.get_brand_context(session=current_session(), workspace_id=g.workspace.id)
        return render_template("dashboard/brand_context.html", form=BrandContextForm.from_context(context), context=context)
    form = BrandContextForm(request.form)
    if form.validate():
        try:
            brand_context.save_brand_context(session=current_session(), workspace_id=g.workspace.id, **form.values())
        except ApiError as error:
            if error.status != 422:
                raise
            _attach(form, error)
        else:
            flash("Saved the brand context.", "info")
            return redirect(url_for("dashboard.brand"), 303)
    context = brand_context.get_brand_context(session=current_session(), workspace_id=g.workspace.id)
    return render_template("dashboard/brand_context.html", form=form, context=context), 422


# -- connected accounts ---------------------------------------------------------------

def _accounts_page(form=None, status=200):
    rows = accounts.workspace_accounts(session=current_session(), workspace_id=g.workspace.id)
    return render_template("dashboard/accounts.html", rows=rows, form=form or AccountConnectForm()), status


@blueprint.get("/accounts")
@auth.sign_in_required
def accounts_list():
    return _accounts_page()


@blueprint.post("/accounts")
@auth.sign_in_required
def accounts_connect():
    form = AccountConnectForm(request.form)
    if not form.validate():
        return _accounts_page(form, 422)
    options, secrets = form.settings()
    try:
        account = accounts.connect_account(
            session=current_session(), workspace_id=g.workspace.id, platform=form.platform.data, mode=form.mode.data,
            connector=form.connector.data, handle=form.handle.data, options=options, secrets=secrets,
        )
    except ApiError as error:
        if error.status != 422:
            raise
        _attach(form, error)
        return _accounts_page(form, 422)
    flash(f"Connected {account.platform} account {account.handle} ({'live' if account.livemode else 'test'} mode).", "info")
    return redirect(url_for("dashboard.accounts_list"), 303)


@blueprint.post("/accounts/<account_id>/disconnect")
@auth.sign_in_required
def accounts_disconnect(account_id):
    account = accounts.disable_account(session=current_session(), account_id=account_id, workspace_id=g.workspace.id)
    flash(f"Disconnected {account.platform} account {account.handle}.", "info")
    return redirect(url_for("dashboard.accounts_list"), 303)


# -- webhooks -------------------------------------------------------------------------

def _runtime():
    from flask import current_app

    return current_app.extensions["socialpub"]


def _webhooks_page(form=None, status=200):
    from socialpub.dashboard.forms import WebhookCreateForm
    from socialpub.webhooks import service as webhooks

    db = current_session()
    endpoints = webhooks.list_endpoints(session=db, workspace_id=g.workspace.id)
    deliveries = webhooks.list_deliveries(session=db, workspace_id=g.workspace.id, limit=50)
    return render_template(
        "dashboard/webhooks.html", endpoints=endpoints, deliveries=deliveries, form=form or WebhookCreateForm(),
        endpoint_urls={endpoint.id: endpoint.url for endpoint in endpoints},
    ), status


def _endpoint_page(endpoint_id):
    from socialpub.webhooks import service as webhooks

    db = current_session()
    endpoint = webhooks.get_endpoint(session=db, workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    revealed = _take_revealed("webhook_secret", endpoint=str(endpoint.id))
    secret = revealed and revealed["secret"]
    deliveries = webhooks.list_deliveries(session=db, workspace_id=g.workspace.id, endpoint_id=endpoint.id, limit=50)
    return render_template("dashboard/webhook.html", endpoint=endpoint, deliveries=deliveries, secret=secret)


def _attempt_now(delivery_id) -> None:
    """One attempt inside this request, so the page shows its outcome at once (the
    outbound client's timeouts bound the wait). Retries, if needed, go to the workers."""
    from socialpub.webhooks import service as webhooks

    runtime = _runtime()
    delivery = webhooks.deliver_now(database=runtime.database, delivery_id=delivery_id, settings=runtime.settings)
    if delivery is None:
        return
    if delivery.status == webhooks.SUCCEEDED:
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
    from socialpub.dashboard.forms import WebhookCreateForm
    from socialpub.webhooks import service as webhooks

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
        _attach(form, error)
        return _webhooks_page(form, 422)
    _reveal_next("webhook_secret", endpoint=str(endpoint.id), secret=secret)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=endpoint.id), 303)


@blueprint.get("/developers/webhooks/<endpoint_id>")
@auth.sign_in_required
def webhook_detail(endpoint_id):
    return _endpoint_page(endpoint_id)


@blueprint.post("/developers/webhooks/<endpoint_id>/test")
@auth.sign_in_required
def webhook_test(endpoint_id):
    from socialpub.webhooks import service as webhooks

    delivery = webhooks.send_test_event(session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    _attempt_now(delivery.id)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id), 303)


@blueprint.post("/developers/webhooks/<endpoint_id>/<any(enable, disable):action>")
@auth.sign_in_required
def webhook_enable(endpoint_id, action):
    from socialpub.webhooks import service as webhooks

    endpoint = webhooks.set_endpoint_enabled(
        session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id, enabled=action == "enable"
    )
    flash(f"{'Enabled' if endpoint.enabled else 'Disabled'} the endpoint {endpoint.url}.", "info")
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=endpoint.id), 303)


@blueprint.post("/developers/webhooks/<endpoint_id>/delete")
@auth.sign_in_required
def webhook_delete(endpoint_id):
    from socialpub.webhooks import service as webhooks

    endpoint = webhooks.get_endpoint(session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    url = endpoint.url
    webhooks.delete_endpoint(session=current_session(), workspace_id=g.workspace.id, endpoint_id=endpoint_id)
    flash(f"Deleted the endpoint {url} and its delivery log.", "info")
    return redirect(url_for("dashboard.webhooks_list"), 303)


@blueprint.post("/developers/webhooks/deliveries/<delivery_id>/resend")
@auth.sign_in_required
def webhook_resend(delivery_id):
    from socialpub.webhooks import service as webhooks

    try:
        delivery = webhooks.resend_delivery(session=current_session(), workspace_id=g.workspace.id, delivery_id=delivery_id)
    except ApiError as error:
        if error.status != 409:
            raise
        flash(error.message, "error")
        delivery = webhooks.get_delivery(session=current_session(), workspace_id=g.workspace.id, delivery_id=delivery_id)
    else:
        _attempt_now(delivery.id)
    return redirect(url_for("dashboard.webhook_detail", endpoint_id=delivery.endpoint_id), 303)
