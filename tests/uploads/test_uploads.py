"""Presigned uploads on the embedded store: the URL, the signed PUT the app takes
(exact size and type, content sniffed, written whole, once), download URLs, removal,
and the sweep of unfinished uploads."""
from __future__ import annotations

import datetime as dt
import io
import uuid
from urllib.parse import urlsplit

import pytest
from PIL import Image

from persistence.uploads import Upload, UploadStatus
from socialpub import clock
from socialpub.uploads import jobs as upload_jobs
from socialpub.uploads.storage import original_name, storage_for
from tests.support.factories import make_key, make_workspace
from tests.uploads.factories import image_bytes, make_upload

PNG = image_bytes()


def presign(client, key, *, data=PNG, content_type="image/png", filename="avatar.png"):
    response = client.post("/api/v1/uploads/presigned", headers=key.headers,
                           json={"filename": filename, "contentType": content_type, "size": len(data)})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def put(client, presigned, data, **headers):
    path = urlsplit(presigned["uploadUrl"]).path
    sent = {"Content-Type": presigned["headers"]["Content-Type"], **headers}
    return client.put(path, content=data, headers=sent)


def error_code(response):
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["success"] is False
    return body["error"]["code"]


def test_a_presigned_upload_is_put_read_back_and_removed(client, session, key, settings):
    presigned = presign(client, key)
    assert presigned["method"] == "PUT"
    assert presigned["uploadUrl"].startswith(f"{settings.public_base_url}/uploads/")
    assert presigned["headers"] == {"Content-Type": "image/png", "Content-Length": str(len(PNG))}
    expires = dt.datetime.fromisoformat(presigned["expiresAt"].replace("Z", "+00:00"))
    assert dt.timedelta(minutes=14) < expires - dt.datetime.now(dt.timezone.utc) <= dt.timedelta(minutes=15)
    upload = session.get(Upload, uuid.UUID(presigned["key"]))
    assert upload.status == UploadStatus.PENDING

    stored = put(client, presigned, PNG)
    assert stored.status_code == 200, stored.text
    assert stored.json()["data"] == {"key": presigned["key"], "status": "ready", "size": len(PNG), "contentType": "image/png"}
    session.expire_all()
    upload = session.get(Upload, uuid.UUID(presigned["key"]))
    assert (upload.status, upload.width, upload.height) == (UploadStatus.READY, 64, 48)

    answer = client.get(f"/api/v1/uploads/{presigned['key']}/url", headers=key.headers)
    assert answer.status_code == 200, answer.text
    download = client.get(urlsplit(answer.json()["data"]["url"]).path)
    assert download.status_code == 200
    assert download.content == PNG
    assert download.headers["content-type"] == "image/png"
    assert download.headers["content-disposition"].startswith('inline; filename="avatar.png"')

    deleted = client.delete(f"/api/v1/uploads/{presigned['key']}", headers=key.headers)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["data"] == {"id": presigned["key"], "deleted": True}
    assert not storage_for(settings).path(original_name(presigned["key"])).exists()
    assert client.get(f"/api/v1/uploads/{presigned['key']}/url", headers=key.headers).status_code == 404
    assert download.status_code == 200 and client.get(urlsplit(answer.json()["data"]["url"]).path).status_code == 404


def test_uploads_are_not_bound_by_the_api_body_cap(client, key, settings):
    noise = Image.effect_noise((1400, 1000), 90).convert("RGB")
    buffer = io.BytesIO()
    noise.save(buffer, "JPEG", quality=100)
    data = buffer.getvalue()
    assert data[:3] == b"\xff\xd8\xff" and len(data) > settings.max_body_bytes
    presigned = presign(client, key, data=data, content_type="image/jpeg", filename="big.jpg")
    assert put(client, presigned, data).status_code == 200


@pytest.mark.parametrize("body, reason", [
    ({"filename": "a.bmp", "contentType": "image/bmp", "size": 10}, "contentType"),
    ({"filename": "a.svg", "contentType": "image/svg+xml", "size": 10}, "contentType"),
    ({"filename": "a.png", "contentType": "image/png", "size": 0}, "size"),
    ({"filename": "a.png", "contentType": "image/png", "size": 10 * 1024 * 1024 + 1}, "size"),
    ({"filename": "   ", "contentType": "image/png", "size": 10}, "filename"),
    ({"filename": "a" * 256, "contentType": "image/png", "size": 10}, "filename"),
    ({"filename": "a.png", "contentType": "image/png", "size": 10, "mediaUrls": []}, "mediaUrls"),
    ({"contentType": "image/png", "size": 10}, "filename"),
])
def test_a_bad_upload_request_is_422_and_makes_nothing(client, session, key, body, reason):
    before = session.query(Upload).count()
    response = client.post("/api/v1/uploads/presigned", headers=key.headers, json=body)
    assert response.status_code == 422, response.text
    assert reason in response.text
    assert session.query(Upload).count() == before


def test_the_put_takes_exactly_the_declared_size_and_type(client, session, key):
    presigned = presign(client, key)
    assert error_code(put(client, presigned, PNG, **{"Content-Type": "image/jpeg"})) == "unsupported_media_type"
    refused = put(client, presigned, PNG + b"x")
    assert refused.status_code == 413 and error_code(refused) == "payload_too_large"
    short = put(client, presigned, PNG[:-1])
    assert short.status_code == 422
    session.expire_all()
    assert session.get(Upload, uuid.UUID(presigned["key"])).status == UploadStatus.PENDING
    assert put(client, presigned, PNG).status_code == 200
    again = put(client, presigned, PNG)
    assert again.status_code == 409 and error_code(again) == "conflict"


@pytest.mark.parametrize("content_type, data, message", [
    ("image/png", image_bytes(fmt="JPEG"), "not image/png"),
    ("image/jpeg", image_bytes(fmt="PNG"), "not image/jpeg"),
    ("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "not a readable image"),
    # A GIF's header (256 x 770) followed by bytes that are no GIF's blocks.
    ("image/gif", b"GIF89a" + bytes(range(64)), "not a readable image"),
    ("image/png", image_bytes(size=(8000, 6000), mode="L", color=0), "megapixels"),
])
def test_content_that_is_not_the_declared_image_is_refused(client, session, key, settings, content_type, data, message):
    presigned = presign(client, key, data=data, content_type=content_type)
    refused = put(client, presigned, data)
    assert refused.status_code == 422, refused.text
    assert message in refused.json()["error"]["message"]
    session.expire_all()
    assert session.get(Upload, uuid.UUID(presigned["key"])).status == UploadStatus.PENDING
    assert not storage_for(settings).path(original_name(presigned["key"])).exists()
    assert not list((storage_for(settings).root / "tmp").glob("put-*"))


def test_a_forged_or_expired_upload_url_is_403(client, key):
    presigned = presign(client, key)
    path = urlsplit(presigned["uploadUrl"]).path
    payload, signature = path.rsplit("/", 1)[1].split(".")
    forged = client.put(f"/uploads/{payload}.{signature[:-2]}AA", content=PNG, headers={"Content-Type": "image/png"})
    assert forged.status_code == 403 and error_code(forged) == "invalid_signature"
    later = clock.FakeClock(dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=16))
    with clock.installed(later):
        expired = put(client, presigned, PNG)
    assert expired.status_code == 403 and "expired" in expired.json()["error"]["message"]
    # A download token is not an upload token, and the other way round.
    assert client.get(path).status_code == 403


def test_an_upload_of_another_workspace_or_mode_is_404(client, session, workspace, key, live_key):
    other = make_upload(session, make_workspace(session, name="Other"))
    live = make_upload(session, workspace, livemode=True)
    for upload, caller in ((other, key), (live, key), (make_upload(session, workspace), live_key)):
        for method, path in (("GET", f"/api/v1/uploads/{upload.id}/url"), ("DELETE", f"/api/v1/uploads/{upload.id}")):
            response = client.request(method, path, headers=caller.headers)
            assert response.status_code == 404 and error_code(response) == "resource_not_found"


def test_a_pending_upload_has_no_download_url_yet(client, session, workspace, key):
    upload = make_upload(session, workspace, status=UploadStatus.PENDING)
    response = client.get(f"/api/v1/uploads/{upload.id}/url", headers=key.headers)
    assert response.status_code == 409 and "pending" in response.json()["error"]["message"]
    assert client.delete(f"/api/v1/uploads/{upload.id}", headers=key.headers).status_code == 200


def test_unfinished_uploads_are_swept_after_a_day(db, session, workspace, settings):
    from workers.queue import InlineQueue

    day_old = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1, minutes=1)
    stale = make_upload(session, workspace, status=UploadStatus.PENDING, created_at=day_old, settings=settings)
    fresh = make_upload(session, workspace, status=UploadStatus.PENDING, settings=settings)
    done = make_upload(session, workspace, created_at=day_old, settings=settings)
    ids = stale.id, fresh.id, done.id
    queue = InlineQueue(workers=1)
    try:
        from workers import context

        context.install(db, queue=queue, settings=settings)
        assert upload_jobs.sweep_unfinished_uploads() == 1
        queue.drain()
    finally:
        queue.close()
    session.expire_all()
    assert session.get(Upload, ids[0]) is None
    assert session.get(Upload, ids[1]) is not None
    assert session.get(Upload, ids[2]).status == UploadStatus.READY


def test_a_key_without_uploads_scopes_is_refused(client, session, workspace):
    reader = make_key(session, workspace, scopes=["uploads:read"])
    response = client.post("/api/v1/uploads/presigned", headers=reader.headers,
                           json={"filename": "a.png", "contentType": "image/png", "size": 10})
    assert response.status_code == 403


def test_a_filename_reaches_the_download_header_safely(client, key):
    presigned = presign(client, key, filename='été "1"\r\nSet-Cookie: x=1.png')
    assert put(client, presigned, PNG).status_code == 200
    url = client.get(f"/api/v1/uploads/{presigned['key']}/url", headers=key.headers).json()["data"]["url"]
    disposition = client.get(urlsplit(url).path).headers["content-disposition"]
    assert "\r" not in disposition and "\n" not in disposition and "set-cookie" not in disposition.lower().split(";")[0]
    assert disposition.startswith('inline; filename="_t_ _1___Set-Cookie: x=1.png"; filename*=UTF-8\'\'%C3%A9t%C3%A9')
