"""`/dashboard`, without its trailing slash, is the address the README and
`socialpub user create` give a newcomer. Through a real server (uvicorn, as deployed)
it redirects to `/dashboard/` with a Location, and following that lands on the
sign-in page: not a locationless 308 rendered as "Something went wrong"."""
from __future__ import annotations

import os
import secrets
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.processes import Server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory, database_url):
    env = {
        **os.environ, "DATABASE_URL": database_url, "SOCIALPUB_SECRET_KEY": secrets.token_urlsafe(32),
        "SOCIALPUB_QUEUE_BACKEND": "inline", "SOCIALPUB_LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    started = Server(env, tmp_path_factory.mktemp("entry") / "server.log")
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


@pytest.mark.parametrize("query", ["", "?from=readme"])
def test_dashboard_without_slash_redirects_to_the_dashboard(server, query):
    with httpx.Client(base_url=server.base_url, follow_redirects=False, timeout=30) as client:
        response = client.get(f"/dashboard{query}")
        assert response.status_code in (301, 302, 307, 308), response.text
        location = response.headers.get("location")
        assert location, response.headers
        assert urlsplit(location).path == "/dashboard/"
        assert urlsplit(location).query == query.lstrip("?")
        assert "Something went wrong" not in response.text

        landed = client.get(location, follow_redirects=True)
    assert landed.status_code == 200
    assert landed.url.path == "/dashboard/sign-in"
    assert "Sign in to the dashboard" in landed.text
    assert landed.headers["content-type"].startswith("text/html")
