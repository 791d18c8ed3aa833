"""Uploads through the generated client: a presigned upload asked for, its bytes PUT to
the URL it gave (the embedded store, served by the same server), a download URL read
back, a refused request read as the error envelope, and the upload removed."""
from __future__ import annotations

import io
from urllib.parse import urlsplit

import httpx
from PIL import Image
from socialpub_client.api.uploads import create_presigned_upload, delete_upload, get_upload_url
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.download_url_response import DownloadUrlResponse
from socialpub_client.models.presigned_upload import PresignedUpload
from socialpub_client.models.presigned_upload_create import PresignedUploadCreate
from socialpub_client.models.presigned_upload_response import PresignedUploadResponse
from socialpub_client.models.upload_content_type import UploadContentType

from tests.sdk.journey import SdkServer, expect, expect_error


def png(size: tuple[int, int] = (90, 60)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (20, 160, 90)).save(buffer, "PNG")
    return buffer.getvalue()


def on_server(sdk_server: SdkServer, url: str) -> str:
    """The URL's path and query on the server under test, which does not listen at the
    default public base URL it signs its URLs for."""
    parts = urlsplit(url)
    return sdk_server.base_url.removesuffix("/api/v1") + parts.path + (f"?{parts.query}" if parts.query else "")


def upload_png(sdk_server: SdkServer, data: bytes, filename: str = "avatar.png") -> PresignedUpload:
    """A presigned upload through the client, its bytes PUT as it says."""
    body = PresignedUploadCreate(filename=filename, content_type=UploadContentType.IMAGEPNG, size=len(data))
    presigned = expect(create_presigned_upload.sync_detailed(client=sdk_server.client(), body=body), 201,
                       PresignedUploadResponse).data
    assert presigned.method == "PUT"
    headers = dict(presigned.headers.additional_properties)
    stored = httpx.put(on_server(sdk_server, presigned.upload_url), content=data, headers=headers)
    assert stored.status_code == 200, stored.text
    return presigned


def test_an_upload_is_sent_read_back_and_removed(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    data = png()
    presigned = upload_png(sdk_server, data)

    url = expect(get_upload_url.sync_detailed(presigned.key, client=client), 200, DownloadUrlResponse).data
    download = httpx.get(on_server(sdk_server, url.url))
    assert download.status_code == 200 and download.content == data
    assert url.expires_at.tzinfo is not None

    refused = create_presigned_upload.sync_detailed(
        client=client, body=PresignedUploadCreate(filename="huge.png", content_type=UploadContentType.IMAGEPNG,
                                                  size=10 * 1024 * 1024 + 1),
    )
    expect_error(refused, 422, "validation_error")

    removed = expect(delete_upload.sync_detailed(presigned.key, client=client), 200, DeletedResponse).data
    assert removed.id == presigned.key and removed.deleted is True
    expect_error(get_upload_url.sync_detailed(presigned.key, client=client), 404, "resource_not_found")
    expect_error(delete_upload.sync_detailed(presigned.key, client=client), 404, "resource_not_found")


def test_a_pending_upload_has_no_url_yet(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    body = PresignedUploadCreate(filename="later.png", content_type=UploadContentType.IMAGEPNG, size=100)
    presigned = expect(create_presigned_upload.sync_detailed(client=client, body=body), 201,
                       PresignedUploadResponse).data
    expect_error(get_upload_url.sync_detailed(presigned.key, client=client), 409, "conflict")
    expect(delete_upload.sync_detailed(presigned.key, client=client), 200, DeletedResponse)
