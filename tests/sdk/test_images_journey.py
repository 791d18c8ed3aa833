"""Images through the generated client: an upload served resized (the answer read as
the image's bytes), in the format Accept allows, again as 304 by its ETag, and refused
parameters read as the error envelope."""
from __future__ import annotations

import io
import uuid

from PIL import Image
from socialpub_client.api.images import get_image
from socialpub_client.api.uploads import delete_upload
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.image_format_input import ImageFormatInput
from socialpub_client.types import File

from tests.sdk.journey import SdkServer, expect, expect_error
from tests.sdk.test_uploads_journey import png, upload_png


def test_an_upload_is_served_resized(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    presigned = upload_png(sdk_server, png((400, 300)), filename="banner.png")

    answer = get_image.sync_detailed(presigned.key, client=client, w=200, f=ImageFormatInput.WEBP, q=70)
    image = Image.open(expect(answer, 200, File).payload)
    assert (image.format, image.size) == ("WEBP", (200, 150))
    assert answer.headers["content-type"] == "image/webp"
    etag = answer.headers["etag"]
    assert answer.headers["cache-control"] == "private, max-age=31536000, immutable"

    again = get_image.sync_detailed(presigned.key, client=client, w=200, f=ImageFormatInput.WEBP, q=70,
                                    if_none_match=etag)
    assert again.status_code == 304 and again.content == b""

    auto = get_image.sync_detailed(presigned.key, client=client, h=60, f=ImageFormatInput.AUTO)
    assert Image.open(io.BytesIO(expect(auto, 200, File).payload.read())).size == (80, 60)
    assert auto.headers["vary"] == "Accept"

    expect_error(get_image.sync_detailed(presigned.key, client=client, w=0), 422, "validation_error")
    expect_error(get_image.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")
    expect(delete_upload.sync_detailed(presigned.key, client=client), 200, DeletedResponse)
    expect_error(get_image.sync_detailed(presigned.key, client=client, w=200), 404, "resource_not_found")
