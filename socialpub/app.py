"""The application factory (cross-cutting): the contract, the middleware, the error
handlers, the dashboard and the docs portal, wired once for every area."""
from __future__ import annotations

import copy

import connexion
from connexion.middleware import MiddlewarePosition
from connexion.options import SwaggerUIOptions
from connexion.resolver import Resolver

from persistence.db import Database
from socialpub import (
    announcements, contract, contract_bundle, crypto, dashboard, error_handlers, keycache, logs, portal,
)
from socialpub.config import Settings
from socialpub.errors import ApiError, render
from socialpub.images.public import PublicImages
from socialpub.linkinbio.public import PublicPages
from socialpub.mcp.endpoint import McpEndpointMiddleware
from socialpub.middleware import API_PREFIX, ApiGateMiddleware, ContractDocumentMiddleware, RequestContextMiddleware
from socialpub.ratelimit import RateLimiter
from socialpub import request as request_context
from socialpub.request import trust_proxies
from socialpub.runtime import Runtime
from socialpub.security import ScopedBearerSecurityHandler
from socialpub.uploads.receiving import UploadReceiver
from socialpub.serialization import ResponseJsonifier
from socialpub.validation import validator_map
from workers import context as job_context
from workers.queue import make_queue


class AreaResolver(Resolver):
    """OperationId `listPosts` of tag `posts` -> `handlers/posts.py:list_posts`. The
    contract's operationIds are camelCase, grouped by tag, so generated clients name
    their functions `posts.list_posts`; the handlers keep their Python names."""

    def resolve_operation_id(self, operation):
        return f"handlers.{contract.handlers()[operation.operation_id]}"


def create_app(settings: Settings | None = None, *, database: Database | None = None) -> connexion.FlaskApp:
    settings = settings or Settings.from_env()
    logs.configure(settings.log_level, settings.log_json)
    database = database or Database.from_settings(settings)
    # Refuses to start (crypto.EncryptionKeysRefused) with keys that cannot read the
    # account secrets: better than serving an API whose every publication would fail.
    crypto.verify_keys(database)
    runtime = Runtime(
        settings=settings,
        database=database,
        rate_limiter=RateLimiter(settings),
        queue=make_queue(settings),
    )
    job_context.install(database, queue=runtime.queue, settings=settings)
    # Every area's reactions to the others' changes, subscribed once at start-up.
    announcements.load_subscribers()
    # Keys revoked or rolled in the dashboard stop working at once in every process.
    keycache.publish_to(settings)

    app = connexion.FlaskApp(
        __name__,
        specification_dir=str(contract.OPENAPI_DIR),
        security_map={"bearer": ScopedBearerSecurityHandler},
        validator_map=validator_map(max_json_depth=settings.max_json_depth),
        jsonifier=ResponseJsonifier(),
    )
    # The bundled contract, as served: connexion would otherwise read and resolve the
    # source files again (its own copy, since it resolves references in place).
    app.add_api(
        copy.deepcopy(contract_bundle.served_document()),
        base_path=API_PREFIX,
        resolver=AreaResolver(),
        strict_validation=True,
        validate_responses=settings.validate_responses,
        pythonic_params=True,
        swagger_ui_options=SwaggerUIOptions(
            swagger_ui=True, swagger_ui_path="/ui", swagger_ui_template_dir=str(portal.SWAGGER_UI_DIR)
        ),
    )
    # Answers the contract URLs (and so Swagger UI) with the bundled contract, before
    # connexion's own copy, whose references are all inlined.
    app.add_middleware(ContractDocumentMiddleware, position=MiddlewarePosition.BEFORE_SWAGGER)
    app.add_middleware(ApiGateMiddleware, position=MiddlewarePosition.BEFORE_SWAGGER, runtime=runtime)
    # The MCP server at /mcp: every operation a tool, each call made through this app.
    app.add_middleware(McpEndpointMiddleware, position=MiddlewarePosition.BEFORE_SWAGGER, runtime=runtime, api=app)
    # The embedded store's signed upload and download URLs (/uploads/<token>) and the
    # signed public image URLs (/i/...): served without a key, outside the API's gate.
    app.add_middleware(UploadReceiver, position=MiddlewarePosition.BEFORE_SWAGGER, runtime=runtime)
    app.add_middleware(PublicImages, position=MiddlewarePosition.BEFORE_SWAGGER, runtime=runtime)
    # Published link-in-bio pages (/p/<slug>, /p/test/<slug>) and their link clicks: HTML.
    app.add_middleware(PublicPages, position=MiddlewarePosition.BEFORE_SWAGGER, runtime=runtime)
    app.add_middleware(RequestContextMiddleware, position=MiddlewarePosition.BEFORE_EXCEPTION, runtime=runtime)
    error_handlers.register(app, error_handlers.AllowedMethods(contract.path_items(), API_PREFIX))
    trust_proxies(app, settings.trusted_proxy_hops)

    flask_app = app.app
    flask_app.extensions["socialpub"] = runtime
    flask_app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    # The developer dashboard: HTML pages at /dashboard, outside the API gate (which
    # meters /api/v1 only) and with its own error pages.
    dashboard.init_app(flask_app, runtime)
    portal.init_app(flask_app)

    # A request asked to commit once (an Idempotency-Key request) records its answer
    # and commits before the answer leaves; every request's session ends with it.
    flask_app.after_request(request_context.commit_once)

    @flask_app.teardown_appcontext
    def _end_request(_exc):
        request_context.end_request()

    @flask_app.get("/healthz")
    def healthz():
        return {"status": "ok"}

    @flask_app.get("/readyz")
    def readyz():
        checks = {}
        try:
            runtime.database.ping()
            checks["database"] = "ok"
        except Exception:  # noqa: BLE001 - any failure means not ready
            checks["database"] = "unreachable"
        if settings.redis_url:
            try:
                from redis import Redis

                Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=2).ping()
                checks["redis"] = "ok"
            except Exception:  # noqa: BLE001
                checks["redis"] = "unreachable"
        if all(value == "ok" for value in checks.values()):
            return {"status": "ready", "checks": checks}
        down = ", ".join(name for name, value in checks.items() if value != "ok")
        body, status, headers = render(ApiError.service_unavailable(f"{down.capitalize()}"))
        return flask_app.response_class(body, status=status, headers=headers)

    return app
