"""The dashboard blueprint and what every page shares: the before/after request hooks
(CSRF check, signed-in member, security headers), error pages, template context,
routing members' pages, handling a form post (a service's refusal goes on the form),
and safe redirects.

Every response under /dashboard, error pages and redirects included, is
`Cache-Control: no-store` and carries the dashboard's framing and content policies.
"""
from __future__ import annotations

import functools
import logging
from urllib.parse import urlsplit

from flask import Blueprint, flash, g, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import HTTPException

from socialpub.dashboard import auth
from socialpub.error_handlers import DATABASE_DOWN, QUEUE_DOWN
from socialpub.errors import ApiError
from socialpub.platforms import display_name

PREFIX = "/dashboard"
logger = logging.getLogger("socialpub.dashboard")
csrf = CSRFProtect()
blueprint = Blueprint(
    "dashboard", __name__, template_folder="templates", static_folder="static", static_url_path="/static"
)


@blueprint.before_request
def _before():
    if request.method == "POST":
        csrf.protect()
    auth.load_member()


def is_dashboard_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def security_headers(response):
    """On every response under /dashboard, the app's after_request (registered in
    init_app): a blueprint's own hook misses the answers of requests no view of it
    matched (405s, routing redirects, 404s)."""
    if not is_dashboard_path(request.path):
        return response
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


@blueprint.app_template_filter("platform")
def _platform(value):
    """A platform as its owner spells it (LinkedIn, TikTok, YouTube)."""
    return display_name(value) if value else "—"


@blueprint.app_template_filter("platforms")
def _platforms(values):
    return ", ".join(display_name(value) for value in values or ()) or "—"


@blueprint.app_context_processor
def _context():
    return {"member": getattr(g, "member", None), "workspace": getattr(g, "workspace", None)}


@blueprint.route("/<path:unknown>", methods=["GET", "POST"])
def not_found(unknown):
    return render_error(404, "There is no dashboard page at this address.")


def member_page(rule: str, *, methods=("GET",)):
    """Routes a page only signed-in members reach (every page but signing in and out):
    anyone else is sent to sign in first."""

    def register(view):
        return blueprint.route(rule, methods=list(methods))(auth.sign_in_required(view))

    return register


def see_other(endpoint: str, **values):
    """After a post, the browser GETs the page named, so reloading it posts nothing again."""
    return redirect(url_for(endpoint, **values), 303)


def done(message: str, endpoint: str, **values):
    """Says what a post did, on the page it goes on to."""
    flash(message, "info")
    return see_other(endpoint, **values)


def form_page(rule: str, form_class, action):
    """A member page with a form, at one address. The page is the view: GET shows
    it; POST submits the form: with valid input, `action(form)` calls the service and
    answers (a redirect); invalid input, or the service's 422 refusal put on the form,
    shows the page again with the form, status 422."""

    def register(page):
        @functools.wraps(page)
        def view():
            if request.method != "POST":
                return page()
            form = form_class(request.form)
            if form.validate():
                try:
                    return action(form)
                except ApiError as error:
                    if error.status != 422:
                        raise
                    attach(form, error)
            return page(form), 422

        return member_page(rule, methods=["GET", "POST"])(view)

    return register


def attach(form, error: ApiError) -> None:
    """Puts a service's field refusal on the form field of the same name (services and
    forms both use the domain's names), else on the form: a refusal about a field the
    form has not got (a connector's `options`, made of several inputs) is the form's."""
    for detail in error.details or [{"field": None, "message": error.message}]:
        name = detail.get("field")
        if name and name in form._fields:
            form[name].errors = list(form[name].errors or []) + [detail["message"]]
        else:
            form.form_errors.append(detail["message"])


def safe_next(target: str | None) -> str:
    """Only a dashboard path of this site: never an open redirect."""
    if target:
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc and parts.path.startswith(PREFIX) and not target.startswith("//"):
            return target.rstrip("?")
    return url_for("dashboard.overview")
