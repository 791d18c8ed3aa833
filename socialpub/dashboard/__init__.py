"""The developer dashboard: server-rendered pages at /dashboard, in the API's process.

Members sign in with an email and a password; the session is a signed cookie scoped
to /dashboard (HttpOnly, SameSite=Lax, Secure over https or as configured). Every
POST carries the session's CSRF token (Flask-WTF's CSRFProtect, enabled for this
blueprint only: the API authenticates with bearer keys, which a browser never sends
by itself, so it needs none). Views call the same service functions as the API and
the CLI.
"""
from __future__ import annotations

import datetime as dt

from flask import Flask, has_request_context, request
from flask.sessions import SecureCookieSessionInterface
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RoutingException

from socialpub.config import secret_key
from socialpub.dashboard import pages  # noqa: F401  (registers every page's routes on the blueprint)
from socialpub.dashboard.auth import SignInLimiter
from socialpub.dashboard.plumbing import PREFIX, blueprint, csrf, is_dashboard_path, render_error, security_headers


class DashboardSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, with a Secure flag that can follow the request."""

    def get_cookie_secure(self, app: Flask) -> bool:
        mode = app.config["SOCIALPUB_SESSION_COOKIE_SECURE"]
        if mode == "auto":
            return has_request_context() and request.is_secure
        return mode == "true"


def init_app(flask_app: Flask, runtime) -> None:
    settings = runtime.settings
    mode = {"1": "true", "yes": "true", "on": "true", "0": "false", "no": "false", "off": "false"}.get(
        settings.session_cookie_secure, settings.session_cookie_secure
    )
    if mode not in ("auto", "true", "false"):
        raise ValueError(f"SOCIALPUB_SESSION_COOKIE_SECURE must be auto, true or false, got {settings.session_cookie_secure!r}")
    for name in ("dashboard_session_max_seconds", "dashboard_session_idle_seconds"):
        if getattr(settings, name) <= 0:
            raise ValueError(f"SOCIALPUB_{name.upper()} must be a positive number of seconds, got {getattr(settings, name)!r}")
    flask_app.config.update(
        SECRET_KEY=secret_key(settings),
        SESSION_COOKIE_NAME="socialpub_session",
        SESSION_COOKIE_PATH=PREFIX,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SOCIALPUB_SESSION_COOKIE_SECURE=mode,
        # The cookie's own expiry; auth.load_member enforces both limits on the server.
        PERMANENT_SESSION_LIFETIME=dt.timedelta(seconds=settings.dashboard_session_max_seconds),
        SOCIALPUB_SESSION_MAX_SECONDS=settings.dashboard_session_max_seconds,
        SOCIALPUB_SESSION_IDLE_SECONDS=settings.dashboard_session_idle_seconds,
        # The blueprint calls csrf.protect() itself; API views must not be checked.
        WTF_CSRF_CHECK_DEFAULT=False,
        # The token lives as long as the session, so a form left open for an hour
        # still submits; signing out ends both.
        WTF_CSRF_TIME_LIMIT=None,
    )
    flask_app.session_interface = DashboardSessionInterface()
    csrf.init_app(flask_app)
    flask_app.extensions["socialpub.sign_in_limiter"] = SignInLimiter(settings)
    flask_app.register_blueprint(blueprint, url_prefix=PREFIX)
    flask_app.after_request(security_headers)

    # Connexion turns every werkzeug HTTPException into its own (rendered as the API's
    # JSON error envelope). A dashboard path that matched no view (404, 405) is
    # answered with a page instead; everything else keeps connexion's handler.
    api_handler = flask_app.error_handler_spec[None][None].get(HTTPException)

    def http_exception(exc: HTTPException):
        # Connexion sets TRAP_HTTP_EXCEPTIONS, so Flask hands even its routing
        # redirects (RequestRedirect: `/dashboard` -> `/dashboard/`, merged slashes)
        # to this handler instead of answering them itself. They are not errors:
        # returned as they are, Flask renders them as the 308 with its Location.
        if isinstance(exc, RoutingException):
            return exc
        if is_dashboard_path(request.path):
            return render_error(exc.code or 500, exc.description)
        if api_handler is None:
            return exc
        return api_handler(exc)

    flask_app.register_error_handler(HTTPException, http_exception)
