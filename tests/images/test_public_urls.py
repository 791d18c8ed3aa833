"""Signed public image URLs (/i/...), for pages without a key: made in the owner's
scope, served without a key, any change refused."""
from __future__ import annotations

import io
from urllib.parse import urlsplit

from PIL import Image

from socialpub.images import service as images
from socialpub.tenancy import TenantScope
from tests.support.factories import make_workspace
from tests.uploads.factories import make_upload


def signed(session, settings, key, upload, **params) -> str:
    scope = TenantScope.of(session, key.principal)
    return urlsplit(images.signed_url(scope=scope, settings=settings, key=upload.id, **params)).path


def test_a_signed_url_serves_the_variant_without_a_key(client, session, workspace, key, settings):
    upload = make_upload(session, workspace)
    path = signed(session, settings, key, upload, w=32, f="webp")
    assert path.startswith("/i/") and path.endswith(f"/w:32,f:webp/{upload.id}")
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/webp"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert Image.open(io.BytesIO(response.content)).size == (32, 24)
    assert client.get(path, headers={"If-None-Match": response.headers["etag"]}).status_code == 304
    assert client.head(path).status_code == 200


def test_a_changed_parameter_or_a_foreign_key_is_403(client, session, workspace, key, settings):
    upload = make_upload(session, workspace)
    other = make_upload(session, workspace)
    path = signed(session, settings, key, upload, w=32)
    signature = path.split("/")[2]
    for tampered in (path.replace("w:32", "w:33"), path.replace(str(upload.id), str(other.id)),
                     f"/i/{signature}/w:32,q:10/{upload.id}", f"/i/{signature[:-1]}x/w:32/{upload.id}"):
        response = client.get(tampered)
        assert response.status_code == 403, tampered
        assert response.json()["error"]["code"] == "invalid_signature"
    assert client.get("/i/only/two").status_code == 404
    assert client.post(path).status_code == 405


def test_signing_needs_the_scope_own_ready_upload(session, workspace, key, settings):
    import pytest

    from socialpub.errors import ApiError

    scope = TenantScope.of(session, key.principal)
    foreign = make_upload(session, make_workspace(session, name="Other"))
    with pytest.raises(ApiError) as refused:
        images.signed_url(scope=scope, settings=settings, key=foreign.id, w=10)
    assert refused.value.status == 404
    with pytest.raises(ApiError) as refused:
        images.signed_url(scope=scope, settings=settings, key=make_upload(session, workspace).id, w=0)
    assert refused.value.status == 422


def test_a_removed_upload_stops_being_served(client, session, workspace, key, settings):
    upload = make_upload(session, workspace)
    path = signed(session, settings, key, upload, w=16)
    assert client.get(path).status_code == 200
    assert client.delete(f"/api/v1/uploads/{upload.id}", headers=key.headers).status_code == 200
    response = client.get(path)
    assert response.status_code == 404 and response.json()["error"]["code"] == "resource_not_found"
