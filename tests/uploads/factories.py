"""Uploads of the tests: images made with Pillow, and upload records with their bytes in
the store the app's settings name."""
from __future__ import annotations

import datetime as dt
import io
import uuid

from PIL import Image

from persistence.uploads import Upload, UploadStatus
from socialpub.uploads.storage import original_name, storage_for
from workers import context


def image_bytes(size=(64, 48), fmt="PNG", color=(200, 40, 40), mode="RGB", **options) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, color).save(buffer, fmt, **options)
    return buffer.getvalue()


CONTENT_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


def make_upload(session, workspace, *, livemode: bool = False, data: bytes | None = None, fmt: str = "PNG",
                status: str = UploadStatus.READY, settings=None, filename: str = "picture.png", **fields) -> Upload:
    """An upload of `workspace`; a ready one has its bytes in the store."""
    data = image_bytes(fmt=fmt) if data is None and status == UploadStatus.READY else data
    now = dt.datetime.now(dt.timezone.utc)
    values = dict(
        id=uuid.uuid4(), filename=filename, content_type=CONTENT_TYPES[fmt], size=len(data or b"x" * 100),
        status=status, upload_expires_at=now + dt.timedelta(minutes=15),
        completed_at=now if status == UploadStatus.READY else None,
    )
    values.update(fields)
    upload = Upload(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(upload)
    session.commit()
    if data is not None and status == UploadStatus.READY:
        storage_for(settings or context.settings()).write(original_name(upload.id), data, upload.content_type)
    return upload
