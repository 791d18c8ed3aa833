"""The signed public image URLs, served by the app itself (ASGI, outside the API's
gate: no key, the signature is the permission): `GET /i/<signature>/<parameters>/<key>`
(socialpub.images.service.signed_path makes them). Any change to the parameters or the
key is 403 `invalid_signature`; a removed upload is 404; errors are the API's JSON
envelopes. The variant is the API's (the same cache and single flight), with
`Cache-Control: public, max-age=31536000, immutable`."""
from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from socialpub.errors import ApiError
from socialpub.images import service
from socialpub.images.service import PUBLIC, PUBLIC_SOURCES

PREFIX = "/i/"
# A variant this small is read in one go; a larger one is sent in chunks read by a thread.
SMALL = 256 * 1024
CHUNK = 256 * 1024


class PublicImages:
    """ASGI middleware answering `/i/...`; every other path goes on."""

    def __init__(self, app, runtime):
        self.app = app
        self.runtime = runtime

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        parts = path[len(PREFIX):].split("/")
        if len(parts) != 3 or not all(parts):
            raise ApiError.route_not_found(path)
        method = scope.get("method", "")
        if method not in ("GET", "HEAD"):
            raise ApiError.method_not_allowed(method, ["GET"])
        settings = self.runtime.settings
        signature, segment, key = parts
        params = service.verify_signed(settings, signature, segment, key)
        source_type = PUBLIC_SOURCES.fresh(key)
        if source_type is None:  # not read lately: the database, from a thread
            source_type = await run_in_threadpool(PUBLIC_SOURCES.source_type, self.runtime.database, key)
        headers = Headers(scope=scope)
        plan = service.plan(settings, key, source_type, params, headers.get("accept"), PUBLIC)
        answer = await service.answer_async(settings, plan, headers.get("if-none-match"))
        await send_answer(send, answer, head=method == "HEAD")


async def send_answer(send, answer, *, head: bool) -> None:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in answer.headers.items()]
    if answer.status == 304:
        await send({"type": "http.response.start", "status": 304, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    headers.append((b"content-length", str(answer.size).encode()))
    if head:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    if answer.size <= SMALL:
        try:
            with open(answer.path, "rb") as handle:
                body = handle.read()
        except FileNotFoundError:  # trimmed between the lookup and the read
            raise ApiError.service_unavailable("The image cache", retry_after=1) from None
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    try:
        handle = await run_in_threadpool(open, answer.path, "rb")
    except FileNotFoundError:
        raise ApiError.service_unavailable("The image cache", retry_after=1) from None
    try:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        while True:
            chunk = await run_in_threadpool(handle.read, CHUNK)
            more = len(chunk) == CHUNK
            await send({"type": "http.response.body", "body": chunk, "more_body": more})
            if not more:
                return
    finally:
        handle.close()
