"""`/mcp`: the MCP server over streamable HTTP, served by the API's own application (an
ASGI middleware beside the API gate of socialpub/middleware.py), outside the contract
like the dashboard.

A request is the API's in everything but its path: the same bearer key (no valid key
is 401 `invalid_api_key`, a workspace off the API plans 403 `plan_not_eligible`, in
the error envelope), the same body cap and JSON body. Rate limits count what a key
does: each tool call is counted as the API request it makes (the gate meters that
request, so a tool costs what its operation costs, and a refusal of it, 429 included,
is the tool's error, which an agent can read and wait on); the protocol's own
messages (initialize, tools/list, ping), which read nothing of the workspace, are not
counted, so a client never fails on a throttled tools/list. A request without a valid
key counts against its address, as on the API, so keys cannot be guessed at speed.
"""
from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from socialpub import security
from socialpub.errors import ApiError
from socialpub.mcp.dispatch import Caller
from socialpub.mcp.server import handle_http
from socialpub.request import client_address

PATH = "/mcp"
METHODS = ["POST"]


def _is_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json"


class McpEndpointMiddleware:
    def __init__(self, app, runtime, api):
        self.app = app
        self.runtime = runtime
        # The application to call for tools: the whole of it, from its outermost layer.
        self.api = api

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path", "").rstrip("/") != PATH:
            await self.app(scope, receive, send)
            return
        settings = self.runtime.settings
        headers = Headers(scope=scope)
        state = scope.setdefault("state", {})
        token = security.bearer_token(headers.get("authorization"))
        client = client_address(
            (scope.get("client") or ("unknown",))[0], headers.get("x-forwarded-for"), settings.trusted_proxy_hops
        )
        body = b""
        if scope.get("method") == "POST" and token:
            body = await self._body(scope, receive, headers, settings.max_body_bytes)
        principal = await run_in_threadpool(self._admit, state, token, client)
        security.authorize(principal, ())
        if scope.get("method") != "POST":
            # Stateless: no stream of server messages to GET, no session to DELETE.
            raise ApiError.method_not_allowed(scope.get("method", ""), METHODS)
        if not _is_json(headers.get("content-type", "")):
            raise ApiError.unsupported_media_type()
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        caller = Caller(
            app=self.api, principal=principal, headers=list(scope.get("headers", [])), client=scope.get("client"),
            scheme=scope.get("scheme", "http"), server=scope.get("server"), request_id=state.get("request_id"),
            state=state,
        )
        await handle_http(caller, scope, replay, send)

    def _admit(self, state, token, client):
        """The caller's key (its tool calls' API requests are what count against it);
        no valid key counts against the address, as the API gate counts it."""
        principal = None
        if token:
            resolved = security.cached_key(token) or security.resolve_key(
                token, self.runtime.database, self.runtime.settings.api_key_cache_seconds
            )
            principal = resolved.principal if resolved is not None else None
        if principal is None:
            limiter = self.runtime.rate_limiter
            _, windows = limiter.windows_for(None)
            decision = limiter.hit(f"address:{client}", windows)
            state["rate_limit_headers"] = decision.headers()
            if not decision.allowed:
                raise ApiError.rate_limited(
                    f"Rate limit exceeded: {decision.refused_by.description}. Retry in {decision.retry_after} seconds.",
                    decision.retry_after,
                )
        state[security.STATE_PRINCIPAL] = principal
        return principal

    @staticmethod
    async def _body(scope, receive, headers, limit: int) -> bytes:
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise ApiError.payload_too_large(limit) if declared.isdigit() else ApiError.validation(
                "Content-Length must be a whole number of bytes."
            )
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
        return b"".join(chunks)
