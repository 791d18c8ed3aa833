"""GET /images/{key}: fitting, formats, Accept, orientation and metadata, animations,
bounds, caching headers and 304."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from socialpub.images.params import avif_supported
from tests.support.factories import make_workspace
from tests.uploads.factories import image_bytes, make_upload


def jpeg_with_exif(size=(60, 40), orientation=1, gps=True) -> bytes:
    image = Image.new("RGB", size, (10, 120, 200))
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "SecretCam"  # Make
    if gps:
        exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 7.0)}
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif, quality=90)
    return buffer.getvalue()


def get(client, key, upload, **params):
    headers = {**key.headers, **params.pop("headers", {})}
    return client.get(f"/api/v1/images/{upload.id}", headers=headers, params=params)


def opened(response) -> Image.Image:
    assert response.status_code == 200, response.text
    return Image.open(io.BytesIO(response.content))


def test_fits_inside_the_box_keeping_the_aspect_ratio(client, session, workspace, key):
    upload = make_upload(session, workspace, data=image_bytes(size=(3000, 2000), fmt="JPEG"), fmt="JPEG")
    assert opened(get(client, key, upload, w=600)).size == (600, 400)
    assert opened(get(client, key, upload, h=100)).size == (150, 100)
    assert opened(get(client, key, upload, w=600, h=100)).size == (150, 100)
    assert opened(get(client, key, upload, w=4096, h=4096)).size == (3000, 2000)  # never enlarged
    response = get(client, key, upload)
    assert opened(response).size == (3000, 2000) and response.headers["content-type"] == "image/jpeg"


@pytest.mark.parametrize("fmt", ["jpeg", "png", "webp", "gif"] + (["avif"] if avif_supported() else []))
def test_each_format(client, session, workspace, key, fmt):
    upload = make_upload(session, workspace, data=image_bytes(size=(300, 200), mode="RGBA", color=(1, 2, 3, 128)))
    response = get(client, key, upload, w=150, f=fmt, q=60)
    assert response.headers["content-type"] == f"image/{fmt}"
    image = opened(response)
    assert image.format == fmt.upper() and image.size == (150, 100)


def test_auto_follows_accept(client, session, workspace, key):
    upload = make_upload(session, workspace)
    plain = get(client, key, upload, f="auto", headers={"Accept": "*/*"})
    assert plain.headers["content-type"] == "image/png" and plain.headers["vary"] == "Accept"
    webp = get(client, key, upload, f="auto", headers={"Accept": "image/webp,*/*;q=0.8"})
    assert webp.headers["content-type"] == "image/webp"
    if avif_supported():
        avif = get(client, key, upload, f="auto", headers={"Accept": "image/avif,image/webp,*/*"})
        assert avif.headers["content-type"] == "image/avif"
        refused = get(client, key, upload, f="auto", headers={"Accept": "image/avif;q=0,image/webp"})
        assert refused.headers["content-type"] == "image/webp"
    assert webp.headers["etag"] != plain.headers["etag"]
    assert "vary" not in get(client, key, upload, f="webp").headers


def test_orientation_is_applied_and_metadata_stripped(client, session, workspace, key):
    upload = make_upload(session, workspace, data=jpeg_with_exif(orientation=6), fmt="JPEG")
    for fmt in ("jpeg", "png", "webp") + (("avif",) if avif_supported() else ()):
        response = get(client, key, upload, f=fmt)
        image = opened(response)
        assert image.size == (40, 60), fmt  # turned a quarter, as the camera said
        assert not image.getexif(), fmt
        assert b"SecretCam" not in response.content and b"GPS" not in response.content


def test_an_animated_gif_keeps_its_first_frame_unless_gif_is_asked(client, session, workspace, key):
    frames = [Image.new("RGB", (80, 80), color) for color in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    upload = make_upload(session, workspace, data=buffer.getvalue(), fmt="GIF")
    first = opened(get(client, key, upload, w=40))
    assert first.format == "GIF" and getattr(first, "n_frames", 1) == 1
    assert getattr(opened(get(client, key, upload, w=40, f="webp")), "n_frames", 1) == 1
    animated = opened(get(client, key, upload, w=40, f="gif"))
    assert animated.n_frames == 3 and animated.size == (40, 40)


def test_caching_headers_and_304(client, session, workspace, key):
    upload = make_upload(session, workspace)
    first = get(client, key, upload, w=32)
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "private, max-age=31536000, immutable"
    again = get(client, key, upload, w=32, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    assert get(client, key, upload, w=33, headers={"If-None-Match": etag}).status_code == 200


@pytest.mark.parametrize("params", [
    {"w": 0}, {"w": 4097}, {"h": -1}, {"q": 0}, {"q": 101}, {"f": "bmp"}, {"w": "wide"}, {"size": 3},
])
def test_bad_parameters_are_422(client, session, workspace, key, params):
    upload = make_upload(session, workspace)
    response = get(client, key, upload, **params)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"


def test_bombs_and_non_images_are_422(client, session, workspace, key):
    bomb = make_upload(session, workspace, data=image_bytes(size=(8000, 6000), mode="L", color=0))
    response = get(client, key, bomb, w=100)
    assert response.status_code == 422 and "megapixels" in response.json()["error"]["message"]
    broken = make_upload(session, workspace, data=b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert get(client, key, broken).status_code == 422
    truncated_data = image_bytes(size=(500, 500), fmt="JPEG")
    truncated = make_upload(session, workspace, data=truncated_data[: len(truncated_data) // 3], fmt="JPEG")
    response = get(client, key, truncated, w=10)
    assert response.status_code in (200, 422)  # Pillow may decode a truncated JPEG's first rows


def test_another_workspace_pending_and_removed_uploads(client, session, workspace, key):
    other = make_upload(session, make_workspace(session, name="Other"))
    assert get(client, key, other).status_code == 404
    pending = make_upload(session, workspace, status="pending")
    assert get(client, key, pending).status_code == 409
    upload = make_upload(session, workspace)
    assert get(client, key, upload, w=10).status_code == 200
    assert client.delete(f"/api/v1/uploads/{upload.id}", headers=key.headers).status_code == 200
    assert get(client, key, upload, w=10).status_code == 404
