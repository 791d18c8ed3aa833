"""ASGI middleware (cross-cutting: every request of every area passes through it).

`RequestContextMiddleware` wraps everything (errors included): request id, rate-limit
headers on every response, one structured log line per request.
`ApiGateMiddleware` runs inside the exception handling, before routing and security:
body size cap, key resolution, rate limiting. What it raises is rendered by the
error handlers like any other failure.
"""
from __future__ import annotations

import logging
import re
import time
import uuid
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders

from socialpub import contract, contract_bundle, security
from socialpub.errors import ApiError, render
from socialpub.request import API_PREFIX, ONE_COMMIT, OneCommitRequest, client_address, client_scheme
from socialpub.idempotency import service as idempotency

logger = logging.getLogger("socialpub.request")
UNMETERED = (f"{API_PREFIX}/openapi.json", f"{API_PREFIX}/openapi.yaml", f"{API_PREFIX}/ui")
SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def _state(scope) -> dict:
    return scope.setdefault("state", {})


# Pages that must never be shown inside another site's frame (clickjacking): the
# docs portal and the API reference (Swagger UI). The dashboard sets its own policy.
_UNFRAMED_PREFIXES = ("/docs", f"{API_PREFIX}/ui")
HSTS = "max-age=31536000; includeSubDomains"


def add_security_headers(scope, headers: MutableHeaders, hops: int) -> None:
    """The headers every response gets by where it is: nothing is sniffed into
    another type; API answers are never stored by a cache (they carry tenant data),
    unless the answer says how (an image's `private, ..., immutable`);
    the docs and reference refuse to be framed; and a request that came over https
    (directly, or through a trusted proxy) is told to keep to it."""
    path = scope.get("path", "")
    headers["X-Content-Type-Options"] = "nosniff"
    if path.startswith(_UNFRAMED_PREFIXES):
        if "content-security-policy" not in headers:
            headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    elif path.startswith(API_PREFIX + "/") and "cache-control" not in headers:
        # (An answer that says how it may be kept, an image's, keeps its own.)
        headers["Cache-Control"] = "no-store"
    forwarded_proto = Headers(scope=scope).get("x-forwarded-proto") if hops else None
    if client_scheme(scope.get("scheme", "http"), forwarded_proto, hops) == "https":
        headers["Strict-Transport-Security"] = HSTS


class RequestContextMiddleware:
    def __init__(self, app, runtime):
        self.app = app
        self.runtime = runtime
        # Connexion's routing scope names the function an operation resolved to
        # (`handlers.rss.create_feed`); the log line names the contract's operationId
        # (`createFeed`), the name the docs, the SDK and the clients' code use.
        self.operation_ids = contract.operation_ids()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = _state(scope)
        scope.setdefault("extensions", {})  # shared with inner copies of the scope
        incoming = Headers(scope=scope).get("x-request-id", "")
        request_id = incoming if SAFE_REQUEST_ID.match(incoming) else f"req_{uuid.uuid4().hex}"
        state["request_id"] = request_id
        started = time.perf_counter()
        status = {"code": 500}

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = MutableHeaders(scope=message)
                headers["X-Request-Id"] = request_id
                for name, value in (state.get("rate_limit_headers") or {}).items():
                    headers[name] = value
                add_security_headers(scope, headers, self.runtime.settings.trusted_proxy_hops)
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            routing = (scope.get("extensions") or {}).get("connexion_routing") or {}
            resolved = routing.get("operation_id")
            principal = state.get(security.STATE_PRINCIPAL)
            logger.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "operation_id": self.operation_ids.get(resolved, resolved),
                    "status": status["code"],
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "api_key_id": str(principal.api_key_id) if principal else None,
                },
            )


class ContractDocumentMiddleware:
    """Serves the bundled contract (socialpub/contract_bundle.py) at
    /api/v1/openapi.json and /api/v1/openapi.yaml, where connexion would serve its
    copy with every reference inlined."""

    DOCUMENTS = {
        f"{API_PREFIX}/openapi.json": (contract_bundle.served_json, b"application/json"),
        f"{API_PREFIX}/openapi.yaml": (contract_bundle.served_yaml, b"application/yaml"),
    }

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        document = self.DOCUMENTS.get(scope.get("path", "")) if scope["type"] == "http" else None
        if document is None or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        render, media_type = document
        body = render()
        headers = [(b"content-type", media_type + b"; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})


class ApiGateMiddleware:
    def __init__(self, app, runtime):
        self.app = app
        self.runtime = runtime

    async def _admit(self, token, cached, client):
        """Who is calling (None: no valid key) and whether a window lets them in. A
        cached key is used while the key revision it was read under is current: with
        Redis the revision comes back with the rate-limit hit, on the embedded default
        it is read from the database; moved, the key is read again (a revoked one is
        then refused, its request counted against it).

        Redis is asked on the event loop (RateLimiter.hit_async): a request whose key
        is cached reaches no thread before its handler. Only the database reads (a
        key not cached, the embedded default's revision) go to one."""
        limiter = self.runtime.rate_limiter
        resolved = cached
        if token and resolved is None:
            resolved = await self._resolve(token)
        principal = resolved.principal if resolved is not None else None
        identity, windows = limiter.windows_for(principal)
        if principal is None:
            identity = f"address:{client}"
        decision = await limiter.hit_async(identity, windows)
        if cached is not None:
            revision = decision.key_revision
            if revision is None and not limiter.shares_counters:
                revision = await run_in_threadpool(security.current_revision, self.runtime.database)
            if not cached.current_at(revision):
                resolved = await self._resolve(token)
                principal = resolved.principal if resolved is not None else None
        return principal, decision

    async def _resolve(self, token):
        database, settings = self.runtime.database, self.runtime.settings
        return await run_in_threadpool(security.resolve_key, token, database, settings.api_key_cache_seconds)

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(API_PREFIX) or path.startswith(UNMETERED):
            await self.app(scope, receive, send)
            return
        settings = self.runtime.settings
        state = _state(scope)
        headers = Headers(scope=scope)

        token = security.bearer_token(headers.get("authorization"))
        client = client_address(
            (scope.get("client") or ("unknown",))[0], headers.get("x-forwarded-for"), settings.trusted_proxy_hops
        )
        cached = security.cached_key(token) if token else None
        principal, decision = await self._admit(token, cached, client)
        state[security.STATE_PRINCIPAL] = principal
        state["rate_limit_headers"] = decision.headers()
        if not decision.allowed:
            raise ApiError.rate_limited(
                f"Rate limit exceeded: {decision.refused_by.description}. Retry in {decision.retry_after} seconds.",
                decision.retry_after,
            )

        method = scope.get("method", "")
        declared_methods = contract.literal_path_methods(path[len(API_PREFIX):])
        if declared_methods and method not in declared_methods and not (method == "HEAD" and "GET" in declared_methods):
            raise ApiError.method_not_allowed(method, declared_methods)

        limit = settings.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise ApiError.validation("Content-Length must be a whole number of bytes.")
            if int(declared) > limit:
                raise ApiError.payload_too_large(limit)
        has_body = (declared is not None and int(declared) > 0) or "transfer-encoding" in headers
        if has_body and not _is_json(headers.get("content-type", "")):
            # Every API body is JSON (files go through presigned upload URLs).
            raise ApiError.unsupported_media_type()
        if has_body and contract.takes_body(scope.get("method", ""), path[len(API_PREFIX):]) is False:
            # A body where the operation takes none is refused rather than ignored:
            # the caller meant something by it.
            raise ApiError.unsupported_media_type("This operation takes no request body.")
        idempotency_key = headers.get(idempotency.HEADER) if scope.get("method") == "POST" and principal else None
        body = None
        if (declared is None and has_body) or idempotency_key is not None:
            # connexion reads a body only when Content-Length says there is one, so a
            # chunked body is gathered here (within the cap) and given a length; an
            # idempotent request's body is part of what identifies it.
            scope, receive, body = await _buffer_body(scope, receive, limit)
        routable = _routable_path(scope)
        if routable != path:
            scope = {**scope, "path": routable}
        if idempotency_key is None:
            await self.app(scope, _capped_receive(receive, limit), send)
            return
        await self._idempotent(scope, receive, send, principal, idempotency.check_key(idempotency_key), body)

    async def _idempotent(self, scope, receive, send, principal, key, body):
        database = self.runtime.database
        outcome = await run_in_threadpool(
            lambda: idempotency.begin(
                database=database, principal=principal, key=key, lock_seconds=self.runtime.settings.idempotency_lock_seconds,
                request_fingerprint=idempotency.fingerprint(scope["method"], scope["path"], scope.get("query_string", b""), body),
            )
        )
        if isinstance(outcome, idempotency.Replay):
            headers = [(name.encode(), value.encode()) for name, value in outcome.headers.items()]
            headers += [(b"idempotent-replayed", b"true"), (b"content-length", str(len(outcome.body)).encode())]
            await send({"type": "http.response.start", "status": outcome.status, "headers": headers})
            await send({"type": "http.response.body", "body": outcome.body})
            return
        # The request's change and its answer commit together, before the answer leaves
        # (socialpub.request.commit_once): a repeat never runs a committed request again.
        asked = OneCommitRequest(
            record=lambda session, status, headers, body: idempotency.complete(
                session, record_id=outcome, status=status, headers=headers, body=body
            ),
            keeps=idempotency.kept,
        )
        _state(scope)[ONE_COMMIT] = asked
        response = {"status": 500, "headers": {}, "body": []}

        async def capture(message):
            if message["type"] == "http.response.start":
                response["status"] = message["status"]
                response["headers"] = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
            elif message["type"] == "http.response.body":
                response["body"].append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, capture)
        except ApiError as error:
            # Rendered by the error handlers outside; what the caller gets is kept.
            rendered, status, headers = render(error)
            await run_in_threadpool(
                lambda: idempotency.finish(database=database, record_id=outcome, status=status, headers={k.lower(): v for k, v in headers.items()}, body=rendered)
            )
            raise
        except BaseException:
            await run_in_threadpool(lambda: idempotency.abandon(database=database, record_id=outcome))
            raise
        if asked.committed:
            return
        # Not kept (a 422, a 5xx): the request's work was rolled back; the key goes.
        await run_in_threadpool(
            lambda: idempotency.finish(
                database=database, record_id=outcome, status=response["status"], headers=response["headers"],
                body=b"".join(response["body"]),
            )
        )


_ENCODED_SLASH = re.compile(r"%2F", re.I)


def _routable_path(scope) -> str:
    """The path to route on. Connexion's router and Flask's disagree on two kinds of
    path, which then skip connexion's routing (operation, validation, security) yet
    reach a Flask view, or one of Flask's slash redirects: a decoded line feed (the
    mount of the base path matches `.*`, which stops at one) and a decoded `%2F` (an
    empty or extra segment). Both are kept percent-encoded, as they came on the wire,
    so such a path parameter is one segment that names no record (404), like any
    other malformed id."""
    path = scope["path"]
    raw = scope.get("raw_path")
    if raw and _ENCODED_SLASH.search(raw.decode("latin-1")):
        path = "%2F".join(unquote(part) for part in _ENCODED_SLASH.split(raw.decode("latin-1")))
    return path.replace("\n", "%0A")


def _is_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json"))


async def _buffer_body(scope, receive, limit: int):
    """Reads the whole body (within the cap); returns a scope whose Content-Length
    says how long it is, a receive that replays it, and the body."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError.payload_too_large(limit)
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    headers = [(k, v) for k, v in scope["headers"] if k.lower() not in (b"transfer-encoding", b"content-length")]
    headers.append((b"content-length", str(len(body)).encode()))
    scope = {**scope, "headers": headers}
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return scope, replay, body


def _capped_receive(receive, limit: int):
    """Counts body bytes as they arrive, for bodies sent without Content-Length."""
    seen = 0

    async def capped():
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise ApiError.payload_too_large(limit)
        return message

    return capped
