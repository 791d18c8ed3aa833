"""The embedded store's signed URLs, served by the app itself (ASGI, outside the API's
gate: no key, the token is the permission): `PUT /uploads/<token>` takes an upload's
bytes, `GET /uploads/<token>` reads them back (a temporary download URL).

A PUT must send exactly the declared size (Content-Length, or a chunked body of that
length: more is 413 as soon as it is over, less is 422) of the declared type
(Content-Type, else 415). The bytes are streamed to a file of their own, their
signature and image header checked against the type (422 for anything else, a
decompression bomb included), and the file linked into place only then: the object
appears whole or not at all, once (a second PUT of the same upload is 409). The
request body cap of the API (SOCIALPUB_MAX_BODY_BYTES) does not apply: the token's
size does. An expired or forged token is 403 `invalid_signature`.
"""
from __future__ import annotations

import os

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from persistence.uploads import Upload, UploadStatus
from socialpub import clock
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope
from socialpub.uploads import signing, sniffing
from socialpub.uploads.service import mark_ready, store_unavailable
from socialpub.uploads.storage import LocalStorage, StorageUnavailable, content_disposition, original_name, storage_for

PREFIX = "/uploads/"
READ_CHUNK = 256 * 1024


def _scope(session, payload) -> TenantScope:
    return TenantScope.for_job(session, payload["w"], bool(payload["l"]), job=f"upload {payload['k']}")


def _token(settings, token: str, purpose: str) -> dict:
    payload = signing.read_token(settings, token)
    if payload is None or payload.get("p") != purpose or not {"k", "e", "w", "l"} <= payload.keys():
        raise ApiError.invalid_signature("This URL is not one the service signed.")
    if not isinstance(payload["e"], int) or payload["e"] < clock.now().timestamp():
        raise ApiError.invalid_signature("This URL has expired: ask for a new one.")
    return payload


def _find(database, payload) -> Upload:
    with database.transaction() as session:
        upload = _scope(session, payload).get(Upload, payload["k"], resource="upload")
        session.expunge(upload)
        return upload


def _finish(database, payload, header) -> bool:
    with database.transaction() as session:
        upload = _scope(session, payload).get(Upload, payload["k"], resource="upload")
        return mark_ready(session, upload, header)


class UploadReceiver:
    """ASGI middleware answering `/uploads/<token>`; every other path goes on."""

    def __init__(self, app, runtime):
        self.app = app
        self.runtime = runtime

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIX) or "/" in path[len(PREFIX):]:
            await self.app(scope, receive, send)
            return
        settings = self.runtime.settings
        storage = storage_for(settings)
        if not isinstance(storage, LocalStorage):
            raise ApiError.route_not_found(path)  # uploads go to the bucket's own URLs
        method = scope.get("method", "")
        token = path[len(PREFIX):]
        if method == "PUT":
            await self._put(scope, receive, send, storage, _token(settings, token, "put"))
        elif method in ("GET", "HEAD"):
            await self._get(scope, send, storage, _token(settings, token, "get"), head=method == "HEAD")
        else:
            raise ApiError.method_not_allowed(method, ["GET", "PUT"])

    async def _put(self, scope, receive, send, storage: LocalStorage, payload: dict):
        size, content_type = payload["s"], payload["t"]
        headers = Headers(scope=scope)
        sent_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if sent_type != content_type:
            raise ApiError.unsupported_media_type(f"This upload takes Content-Type: {content_type}.")
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise ApiError.validation("Content-Length must be a whole number of bytes.")
            if int(declared) > size:
                raise ApiError.payload_too_large(size)
            if int(declared) < size:
                raise ApiError.validation(f"This upload is {size} bytes; Content-Length says {int(declared)}.")
        upload = await run_in_threadpool(_find, self.runtime.database, payload)
        if upload.status == UploadStatus.READY:
            raise ApiError.conflict("This upload's bytes have arrived already.")
        handle, temp_path = await run_in_threadpool(storage.temp_file)
        try:
            received = await self._receive_into(receive, handle, size)
            await run_in_threadpool(handle.close)
            if received < size:
                raise ApiError.validation(f"This upload is {size} bytes; {received} arrived.")
            header = await run_in_threadpool(_check, temp_path, content_type)
            placed = await run_in_threadpool(storage.place, original_name(upload.id), temp_path)
        finally:
            handle.close()
            temp_path.unlink(missing_ok=True)
        if not placed:
            raise ApiError.conflict("This upload's bytes have arrived already.")
        try:
            finished = await run_in_threadpool(_finish, self.runtime.database, payload, header)
        except BaseException:
            # Not recorded (the upload was removed meanwhile, the database went away):
            # the object goes too, so that a new PUT of this upload can be taken.
            await run_in_threadpool(storage.delete, original_name(upload.id))
            raise
        if not finished:
            raise ApiError.conflict("This upload's bytes have arrived already.")
        body = {"success": True, "data": {"key": str(upload.id), "status": UploadStatus.READY, "size": size,
                                          "contentType": content_type}}
        await _send(send, 200, orjson.dumps(body), [(b"content-type", b"application/json")])

    @staticmethod
    async def _receive_into(receive, handle, size: int) -> int:
        received = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ApiError.validation("The upload was interrupted.")
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > size:
                raise ApiError.payload_too_large(size)
            if chunk:
                await run_in_threadpool(handle.write, chunk)
            if not message.get("more_body", False):
                return received

    async def _get(self, scope, send, storage: LocalStorage, payload: dict, *, head: bool):
        upload = await run_in_threadpool(_find, self.runtime.database, payload)
        if upload.status != UploadStatus.READY:
            raise ApiError.conflict(f"Upload '{upload.id}' is still pending: its bytes have not arrived.")
        path = storage.path(original_name(upload.id))
        try:
            handle = await run_in_threadpool(open, path, "rb")
        except FileNotFoundError:
            raise ApiError.not_found("upload", upload.id) from None
        except OSError as exc:
            raise store_unavailable(exc) from None
        max_age = max(0, int(payload["e"] - clock.now().timestamp()))
        headers = [
            (b"content-type", upload.content_type.encode()),
            (b"content-disposition", content_disposition(upload.filename).encode("latin-1")),
            (b"cache-control", f"private, max-age={max_age}".encode()),
            (b"content-security-policy", b"default-src 'none'"),
        ]
        try:
            length = (await run_in_threadpool(os.fstat, handle.fileno())).st_size
            headers.append((b"content-length", str(length).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            if head:
                await send({"type": "http.response.body", "body": b""})
                return
            while True:
                chunk = await run_in_threadpool(handle.read, READ_CHUNK)
                more = len(chunk) == READ_CHUNK
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                if not more:
                    return
        finally:
            handle.close()


def _check(path, content_type: str) -> sniffing.Header:
    with open(path, "rb") as handle:
        start = handle.read(sniffing.SNIFF_BYTES)
        if not sniffing.signature_matches(content_type, start):
            raise ApiError.validation(f"The file's content is not {content_type}.")
        handle.seek(0)
        try:
            return sniffing.read_header(handle, content_type)
        except sniffing.Refused as refused:
            raise ApiError.validation(str(refused)) from None


async def _send(send, status: int, body: bytes, headers: list) -> None:
    headers = headers + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
