"""Uploads: asking for a presigned URL, learning that the bytes arrived, a temporary
download URL, and removing an upload with its variants.

An upload is `pending` until its bytes arrive, then `ready`. On the embedded store
the service takes the PUT itself (socialpub.uploads.receiving) and the upload is
ready when that PUT ends. On S3 the bytes go straight to the store: the upload is
found ready the first time it is asked for after they arrived (its download URL, an
image of it) or by the sweep, once the object's size, type and content are checked.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import update

from persistence.uploads import Upload, UploadStatus
from socialpub import clock
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope, scoped
from socialpub.uploads import changes, signing, sniffing
from socialpub.uploads.storage import StorageUnavailable, original_name, storage_for

MAX_FILENAME_CHARS = 255


@dataclass(frozen=True)
class PresignedUpload:
    key: str
    upload_url: str
    method: str
    headers: dict
    expires_at: dt.datetime


@dataclass(frozen=True)
class DownloadUrl:
    url: str
    expires_at: dt.datetime


def store_unavailable(exc: Exception) -> ApiError:
    return ApiError.service_unavailable("The file store")


def check_filename(filename) -> str:
    name = filename.strip() if isinstance(filename, str) else ""
    if not name:
        raise ApiError.field_invalid("filename", "filename must not be blank.")
    if len(name) > MAX_FILENAME_CHARS:
        raise ApiError.field_invalid("filename", f"filename may be at most {MAX_FILENAME_CHARS} characters.")
    return name


def check_content_type(content_type) -> str:
    if content_type not in sniffing.CONTENT_TYPES:
        raise ApiError.field_invalid("content_type", f"content_type must be one of {', '.join(sniffing.CONTENT_TYPES)}.")
    return content_type


def check_size(size) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= sniffing.MAX_UPLOAD_BYTES:
        raise ApiError.field_invalid("size", f"size must be between 1 and {sniffing.MAX_UPLOAD_BYTES} bytes (10 MiB).")
    return size


def create_presigned(*, session, principal, settings, filename, content_type, size) -> PresignedUpload:
    """A pending upload and the URL its bytes are PUT to, for 15 minutes (by default):
    exactly `size` bytes of `content_type`, checked to be such an image."""
    scope = TenantScope.of(session, principal)
    upload = Upload(
        id=uuid.uuid4(), filename=check_filename(filename), content_type=check_content_type(content_type),
        size=check_size(size), status=UploadStatus.PENDING,
        upload_expires_at=clock.now() + dt.timedelta(seconds=settings.upload_url_seconds),
    )
    scope.add(upload)
    storage = storage_for(settings)
    try:
        presigned = storage.presigned_put(
            original_name(upload.id), content_type=upload.content_type, size=upload.size,
            expires_in=settings.upload_url_seconds,
        )
    except (StorageUnavailable, ValueError) as exc:
        raise store_unavailable(exc) from None
    if presigned is None:
        token = signing.make_token(settings, {
            "p": "put", "k": str(upload.id), "w": str(upload.workspace_id), "l": upload.livemode,
            "s": upload.size, "t": upload.content_type, "e": int(upload.upload_expires_at.timestamp()),
        })
        presigned = (f"{settings.public_base_url}/uploads/{token}",
                     {"Content-Type": upload.content_type, "Content-Length": str(upload.size)})
    session.commit()
    url, headers = presigned
    return PresignedUpload(key=str(upload.id), upload_url=url, method="PUT", headers=headers,
                           expires_at=upload.upload_expires_at)


def ready_upload(scope: TenantScope, settings, key) -> Upload:
    """The scope's upload `key`, ready; 404 when it has none, 409 while its bytes have
    not arrived (or were refused)."""
    upload = scope.get(Upload, key, resource="upload")
    if upload.status != UploadStatus.READY and not arrived(scope.session, settings, upload):
        reason = f" (the bytes sent were refused: {upload.refused_reason})" if upload.refused_reason else ""
        raise ApiError.conflict(f"Upload '{key}' is still pending: its bytes have not arrived{reason}.")
    return upload


def arrived(session, settings, upload: Upload) -> bool:
    """Whether a pending upload's bytes are in the store now, checked (S3 only: the
    embedded store learns it from its own PUT). Bytes that are not what was declared
    are removed, and the upload stays pending with the reason."""
    storage = storage_for(settings)
    if storage.kind == "local" or upload.status == UploadStatus.READY:
        return upload.status == UploadStatus.READY
    name = original_name(upload.id)
    try:
        info = storage.head(name)
        if info is None:
            return False
        problem, header = None, None
        declared_type = (info.content_type or "").split(";")[0].strip().lower()
        if info.size != upload.size:
            problem = f"{info.size} bytes arrived, {upload.size} were declared."
        elif declared_type != upload.content_type:
            problem = f"they were sent as {declared_type or 'no type'}, not {upload.content_type}."
        else:
            data = storage.read(name)
            try:
                header = sniffing.check_bytes(data or b"", upload.content_type)
            except sniffing.Refused as refused:
                problem = str(refused)
        if problem is not None:
            storage.delete(name)
    except StorageUnavailable as exc:
        raise store_unavailable(exc) from None
    if problem is not None:
        session.execute(update(Upload).where(Upload.id == upload.id).values(refused_reason=problem[:500])
                        .execution_options(synchronize_session=False))
        session.commit()
        upload.refused_reason = problem[:500]
        return False
    return mark_ready(session, upload, header)


def mark_ready(session, upload: Upload, header: sniffing.Header) -> bool:
    """Records that a pending upload's bytes arrived (once: False if it was not pending)."""
    now = clock.now()
    done = session.execute(
        update(Upload).where(Upload.id == upload.id, Upload.status == UploadStatus.PENDING)
        .values(status=UploadStatus.READY, completed_at=now, updated_at=now, width=header.width, height=header.height,
                refused_reason=None, lease_until=None, claim_token=None)
        .execution_options(synchronize_session=False)
    ).rowcount
    session.commit()
    if done:
        upload.status, upload.completed_at, upload.width, upload.height = UploadStatus.READY, now, header.width, header.height
    return bool(done)


def download_url(*, session, principal, settings, key) -> DownloadUrl:
    """A URL that reads the upload's bytes, without a key, for a while."""
    upload = ready_upload(TenantScope.of(session, principal), settings, key)
    expires_at = clock.now() + dt.timedelta(seconds=settings.download_url_seconds)
    storage = storage_for(settings)
    try:
        url = storage.presigned_get(original_name(upload.id), expires_in=settings.download_url_seconds,
                                    content_type=upload.content_type, filename=upload.filename)
    except (StorageUnavailable, ValueError) as exc:
        raise store_unavailable(exc) from None
    if url is None:
        token = signing.make_token(settings, {"p": "get", "k": str(upload.id), "w": str(upload.workspace_id),
                                              "l": upload.livemode, "e": int(expires_at.timestamp())})
        url = f"{settings.public_base_url}/uploads/{token}"
    return DownloadUrl(url=url, expires_at=expires_at)


def recent_uploads(*, scope: TenantScope, limit: int = 20) -> list[Upload]:
    """A workspace's uploads, newest first (the operator's listing)."""
    query = scope.select(Upload).order_by(Upload.created_at.desc(), Upload.id.desc()).limit(limit)
    return list(scope.session.execute(query).scalars())


@scoped
def delete_upload(scope: TenantScope, *, settings, key) -> str:
    """Removes the upload, its object and its variants (announced, so that the images
    area drops them). The record goes in the same transaction as the object: a store
    that cannot be reached leaves both (503)."""
    session = scope.session
    upload = scope.get(Upload, key, resource="upload", for_update=True)
    identifier = str(upload.id)
    remove(session, settings, upload, scope=scope)
    session.commit()
    return identifier


def remove(session, settings, upload: Upload, *, scope: TenantScope) -> None:
    """Deletes the upload's object (and, by the announcement, its variants) and its
    record, in the caller's transaction."""
    changes.UPLOADS.announce("deleted", scope=scope, record=upload)
    try:
        storage_for(settings).delete(original_name(upload.id))
    except StorageUnavailable as exc:
        raise store_unavailable(exc) from None
    session.delete(upload)
