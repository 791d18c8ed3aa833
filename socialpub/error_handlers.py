"""Translate every failure, ours or the framework's, into the error envelope
(cross-cutting)."""
from __future__ import annotations

import dataclasses
import logging
import re
import sys
import uuid
from http import HTTPStatus

import h11
import sqlalchemy.exc
from connexion.exceptions import (
    BadRequestProblem,
    OAuthProblem,
    OAuthScopeProblem,
    ProblemException,
    UnsupportedMediaTypeProblem,
)
from connexion.lifecycle import ConnexionResponse
from starlette.exceptions import HTTPException

from socialpub.contract import HTTP_METHODS
from socialpub.errors import ApiError, render, trim_validator_message

logger = logging.getLogger("socialpub.errors")

try:  # redis is optional at run time (embedded default)
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError:  # pragma: no cover
    RedisConnectionError = RedisTimeoutError = ()

try:  # uvicorn's fast parser, there unless uvicorn was installed without [standard]
    import httptools
except ImportError:  # pragma: no cover
    httptools = None

# A dependency that is down is 503 with Retry-After, on the API and the dashboard alike.
DATABASE_DOWN = (sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError, sqlalchemy.exc.TimeoutError)
QUEUE_DOWN = tuple(error for error in (RedisConnectionError, RedisTimeoutError) if error)


class AllowedMethods:
    """The methods the contract declares per path, for 405 answers (connexion's own
    Allow header names only one)."""

    def __init__(self, path_items: dict, base_path: str):
        self.routes = []
        for template, item in path_items.items():
            pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(base_path + template))
            methods = sorted(m.upper() for m in item if m in HTTP_METHODS)
            self.routes.append((re.compile(f"^{pattern}/?$"), methods))

    def for_path(self, path: str) -> list[str]:
        for pattern, methods in self.routes:
            if pattern.match(path):
                return methods
        return []


def _state(request) -> dict:
    return request.scope.get("state") or {}


def _response(error: ApiError) -> ConnexionResponse:
    body, status, headers = render(error)
    return ConnexionResponse(status_code=status, body=body, headers=headers, content_type="application/json")


def register(app, allowed_methods: AllowedMethods) -> None:
    async def api_error(request, exc: ApiError):
        if exc.status >= 500:
            logger.error("%s: %s", exc.code, exc.message, extra={"request_id": _state(request).get("request_id")})
        return _response(exc)

    async def unauthorized(request, exc):
        return _response(ApiError.invalid_api_key())

    async def forbidden(request, exc):
        required = getattr(exc, "required_scopes", None) or []
        return _response(ApiError.insufficient_scope(list(required)) if required else ApiError(403, "insufficient_scope", "This key lacks the scope this operation requires."))

    async def bad_request(request, exc):
        message = trim_validator_message(str(getattr(exc, "detail", "") or "The request failed validation."))
        return _response(ApiError.validation(message))

    async def unsupported_media(request, exc):
        return _response(ApiError.unsupported_media_type())

    async def problem(request, exc: ProblemException):
        if exc.status >= 500:
            # e.g. a response that breaks the contract (validate_responses): our bug.
            logger.error(
                "%s: %s", exc.__class__.__name__, exc.detail,
                extra={"request_id": _state(request).get("request_id"), "path": request.url.path},
            )
        return _response(_from_status(request, exc.status, str(exc.detail or exc.title or "")))

    async def http_exception(request, exc: HTTPException):
        return _response(_from_status(request, exc.status_code, str(exc.detail or "")))

    async def undecodable(request, exc):
        return _response(ApiError.validation("The request body is not valid UTF-8 text."))

    async def database_down(request, exc):
        logger.warning("database unavailable: %s", exc.__class__.__name__, extra={"request_id": _state(request).get("request_id")})
        return _response(ApiError.service_unavailable("The database"))

    async def queue_down(request, exc):
        logger.warning("redis unavailable: %s", exc.__class__.__name__, extra={"request_id": _state(request).get("request_id")})
        return _response(ApiError.service_unavailable("The job queue"))

    async def unexpected(request, exc):
        logger.error(
            "unhandled exception",
            exc_info=exc,
            extra={"request_id": _state(request).get("request_id"), "path": request.url.path},
        )
        return _response(ApiError.internal())

    def _from_status(request, status: int, detail: str) -> ApiError:
        path = request.url.path
        # 3xx: Flask's router redirecting a path that connexion's did not route (an
        # empty segment, `//`). The API names no resource by such a path.
        if status == 404 or 300 <= status < 400:
            return ApiError.route_not_found(path)
        if status == 405:
            return ApiError.method_not_allowed(request.method, allowed_methods.for_path(path))
        if status == 401:
            return ApiError.invalid_api_key()
        if status == 403:
            return ApiError(403, "insufficient_scope", "This key lacks the scope this operation requires.")
        if status == 413:
            return ApiError.payload_too_large(0)
        if status == 415:
            return ApiError.unsupported_media_type()
        if 400 <= status < 500:
            return ApiError.validation(trim_validator_message(detail) or "The request failed validation.")
        if status == 503:
            return ApiError.service_unavailable()
        return ApiError.internal()

    app.add_error_handler(ApiError, api_error)
    app.add_error_handler(OAuthScopeProblem, forbidden)
    app.add_error_handler(OAuthProblem, unauthorized)
    app.add_error_handler(UnsupportedMediaTypeProblem, unsupported_media)
    app.add_error_handler(BadRequestProblem, bad_request)
    app.add_error_handler(ProblemException, problem)
    app.add_error_handler(HTTPException, http_exception)
    app.add_error_handler(UnicodeDecodeError, undecodable)
    for db_error in DATABASE_DOWN:
        app.add_error_handler(db_error, database_down)
    for queue_error in QUEUE_DOWN:
        app.add_error_handler(queue_error, queue_down)
    app.add_error_handler(Exception, unexpected)


# --- Requests the server cannot read ------------------------------------------------
# uvicorn answers a request it cannot parse (raw bytes outside ASCII in the path, a
# malformed header line) itself, in text/plain, before any application code runs.
# Its only hook is the protocol class, which whoever starts the server chooses (the
# uvicorn command, gunicorn's UvicornWorker, the tests); the app factory runs in all
# of them before the first connection, so the answer is replaced from there.

_NON_ASCII_BYTE = re.compile(r"\\x[89a-f][0-9a-f]")


def unreadable_request(exc: BaseException | None) -> ApiError:
    """The envelope for a request the server could not parse. A request target that
    is not a URL (bytes outside ASCII, which must be percent-encoded) names no route:
    404, as any unknown path. Anything else is not HTTP/1.1: 400."""
    not_a_url = (httptools is not None and isinstance(exc, httptools.HttpParserInvalidURLError)) or (
        isinstance(exc, h11.RemoteProtocolError)
        and str(exc).startswith("illegal request line")
        and _NON_ASCII_BYTE.search(str(exc)) is not None
    )
    if not_a_url:
        return ApiError.route_not_found("a path with bytes outside ASCII (percent-encode them)")
    return dataclasses.replace(ApiError.validation("The request is not valid HTTP/1.1 and could not be read."), status=400)


def send_unreadable_request_answer(protocol, _message: str) -> None:
    """uvicorn's `send_400_response` of our protocols (socialpub.server); uvicorn
    calls it inside its `except` for the parser's error."""
    body, status, headers = render(unreadable_request(sys.exc_info()[1]))
    headers = {**headers, "X-Request-Id": f"req_{uuid.uuid4().hex}", "Content-Length": str(len(body)), "Connection": "close"}
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode()]
    head += [name + b": " + value + b"\r\n" for name, value in protocol.server_state.default_headers]
    head += [f"{name.lower()}: {value}\r\n".encode("latin-1") for name, value in headers.items()]
    protocol.transport.write(b"".join(head) + b"\r\n" + body)
    protocol.transport.close()
