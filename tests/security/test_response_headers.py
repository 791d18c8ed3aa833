"""Headers by where a response is: every one is `nosniff`; API answers are never
stored by a cache; the docs portal and the API reference refuse to be framed; a
request that came over https (directly, or through a trusted proxy) gets HSTS, and
one that did not, or that only says so without a trusted proxy, does not."""
from __future__ import annotations

import pytest

from socialpub.app import create_app
from tests.support.settings import test_settings
from workers import context as job_context

HSTS = "strict-transport-security"


@pytest.mark.parametrize("path, status", [
    ("/api/v1/posts", 200), ("/api/v1/posts/not-a-post", 404), ("/api/v1/nothing-here", 404),
    ("/api/v1/openapi.json", 200),
])
def test_api_answers_are_not_sniffed_nor_stored(client, key, path, status):
    response = client.get(path, headers=key.headers)
    assert response.status_code == status
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


def test_a_keyless_refusal_too(client):
    response = client.get("/api/v1/posts")
    assert response.status_code == 401
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("path", ["/docs", "/api/v1/ui/"])
def test_the_docs_and_the_reference_refuse_to_be_framed(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


def test_plain_http_gets_no_hsts(client, key):
    assert HSTS not in client.get("/api/v1/posts", headers=key.headers).headers


def test_https_gets_hsts(app, key):
    with app.test_client(base_url="https://api.example.test") as secure:
        response = secure.get("/api/v1/posts", headers=key.headers)
    assert response.headers[HSTS].startswith("max-age=31536000")


@pytest.mark.parametrize("hops, says_https", [(0, False), (1, True)])
def test_a_forwarded_scheme_counts_only_from_a_trusted_proxy(database_url, db, hops, says_https):
    saved = (job_context._database, job_context._queue, job_context._settings)
    application = create_app(test_settings(database_url, queue_backend="inline", trusted_proxy_hops=hops), database=db)
    try:
        with application.test_client() as client:
            response = client.get("/healthz", headers={"X-Forwarded-Proto": "https"})
    finally:
        application.app.extensions["socialpub"].queue.close()
        job_context._database, job_context._queue, job_context._settings = saved
    assert (HSTS in response.headers) is says_https


def test_the_reference_is_a_current_swagger_ui(client):
    from socialpub.portal import SWAGGER_UI_DIR

    version = (SWAGGER_UI_DIR / "VERSION").read_text().strip()
    assert int(version.split(".")[0]) >= 5
    page = client.get("/api/v1/ui/")
    assert 'url: "/api/v1/openapi.json"' in page.text
    bundle = client.get("/api/v1/ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and bundle.content == (SWAGGER_UI_DIR / "swagger-ui-bundle.js").read_bytes()
    assert bundle.headers["x-content-type-options"] == "nosniff"
