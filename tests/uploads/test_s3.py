"""Uploads on an S3-compatible store: a local S3 server (moto's, in a thread of the
test process), never the internet. The presigned PUT goes straight to the store; the
upload is found ready once what arrived is checked, and refused bytes are removed."""
from __future__ import annotations

import io
import uuid

import httpx
import pytest
from PIL import Image

from persistence.uploads import Upload, UploadStatus
from socialpub.uploads.storage import storage_for
from tests.support.settings import test_settings
from tests.uploads.factories import image_bytes

BUCKET = "socialpub-uploads-test"


@pytest.fixture(scope="module")
def s3_endpoint():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    import boto3

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                 aws_secret_access_key="test").create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


@pytest.fixture
def settings(database_url, test_redis_url, s3_endpoint):
    return test_settings(
        database_url, test_redis_url, uploads_s3_bucket=BUCKET, uploads_s3_endpoint_url=s3_endpoint,
        uploads_s3_region="us-east-1", uploads_s3_access_key_id="test", uploads_s3_secret_access_key="test",
        uploads_s3_addressing_style="path",
    )


def presign(client, key, data, content_type="image/png"):
    response = client.post("/api/v1/uploads/presigned", headers=key.headers,
                           json={"filename": "photo.png", "contentType": content_type, "size": len(data)})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_an_upload_goes_straight_to_the_store(client, session, key, settings, s3_endpoint):
    data = image_bytes(size=(120, 80))
    presigned = presign(client, key, data)
    assert presigned["uploadUrl"].startswith(f"{s3_endpoint}/{BUCKET}/originals/{presigned['key']}?")
    assert "content-length%3Bcontent-type" in presigned["uploadUrl"]  # both signed
    stored = httpx.put(presigned["uploadUrl"], content=data, headers=presigned["headers"])
    assert stored.status_code == 200, stored.text

    answer = client.get(f"/api/v1/uploads/{presigned['key']}/url", headers=key.headers)
    assert answer.status_code == 200, answer.text
    session.expire_all()
    assert session.get(Upload, uuid.UUID(presigned["key"])).status == UploadStatus.READY
    download = httpx.get(answer.json()["data"]["url"])
    assert download.status_code == 200 and download.content == data

    image = client.get(f"/api/v1/images/{presigned['key']}", headers=key.headers, params={"w": 60, "f": "webp"})
    assert image.status_code == 200, image.text
    assert Image.open(io.BytesIO(image.content)).size == (60, 40)

    assert client.delete(f"/api/v1/uploads/{presigned['key']}", headers=key.headers).status_code == 200
    assert storage_for(settings).head(f"originals/{presigned['key']}") is None


def test_bytes_that_are_not_the_declared_image_are_removed(client, session, key, settings):
    data = image_bytes(fmt="JPEG")
    presigned = presign(client, key, data)  # declared PNG, JPEG bytes sent
    assert httpx.put(presigned["uploadUrl"], content=data, headers=presigned["headers"]).status_code == 200
    refused = client.get(f"/api/v1/uploads/{presigned['key']}/url", headers=key.headers)
    assert refused.status_code == 409
    assert "not image/png" in refused.json()["error"]["message"]
    assert storage_for(settings).head(f"originals/{presigned['key']}") is None
    session.expire_all()
    assert session.get(Upload, uuid.UUID(presigned["key"])).status == UploadStatus.PENDING


def test_nothing_arrived_yet_is_409(client, key):
    presigned = presign(client, key, image_bytes())
    response = client.get(f"/api/v1/images/{presigned['key']}", headers=key.headers)
    assert response.status_code == 409


def test_the_embedded_put_url_is_not_served_with_a_bucket(client):
    assert client.put("/uploads/whatever.sig", content=b"x").status_code == 404
