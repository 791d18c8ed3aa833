"""Only SOCIALPUB_TRUSTED_PROXY_HOPS decides which forwarded headers count, in every
server the README documents. uvicorn, by default, believes X-Forwarded-For and
-Proto from 127.0.0.1: behind a same-host proxy that passes the header through,
every client could pick its own address and never meet the per-address rate limit.
Real server processes, a tight limit for requests without a key."""
from __future__ import annotations

import os

import httpx
import pytest

from persistence.migrate import upgrade
from tests.support.processes import Server

LIMIT = 5
pytestmark = pytest.mark.slow


def started(tmp_path, kind: str, hops: int) -> Server:
    database_url = f"sqlite:///{tmp_path / 'server.db'}"
    upgrade(database_url)
    env = {
        **os.environ, "DATABASE_URL": database_url, "SOCIALPUB_QUEUE_BACKEND": "inline",
        "SOCIALPUB_LOG_LEVEL": "WARNING", "SOCIALPUB_RATE_LIMIT_ANONYMOUS_PER_MINUTE": str(LIMIT),
        "SOCIALPUB_TRUSTED_PROXY_HOPS": str(hops),
    }
    env.pop("REDIS_URL", None)
    server = Server(env, tmp_path / f"{kind}.log", kind=kind)
    server.wait_ready()
    return server


def keyless_statuses(server: Server, count: int, **headers) -> list[int]:
    """Statuses of `count` keyless requests, each naming another client in X-Forwarded-For."""
    with httpx.Client(base_url=server.base_url, timeout=10) as client:
        return [
            client.get("/api/v1/posts", headers={"X-Forwarded-For": f"203.0.113.{number}", **headers}).status_code
            for number in range(1, count + 1)
        ]


@pytest.mark.parametrize("kind", ["serve", "gunicorn"])
def test_without_trusted_proxies_a_forwarded_address_changes_nothing(tmp_path, kind):
    server = started(tmp_path, kind, hops=0)
    try:
        statuses = keyless_statuses(server, LIMIT + 2, **{"X-Forwarded-Proto": "https"})
        assert statuses == [401] * LIMIT + [429, 429], server.output()
        # Nor does a forwarded scheme: the request came over plain http.
        answer = httpx.get(f"{server.base_url}/api/v1/posts", headers={"X-Forwarded-Proto": "https"})
        assert "strict-transport-security" not in answer.headers
    finally:
        server.stop()


@pytest.mark.parametrize("kind", ["serve", "gunicorn"])
def test_behind_one_trusted_proxy_its_forwarded_address_is_the_client(tmp_path, kind):
    server = started(tmp_path, kind, hops=1)
    try:
        # Each request from another client, as the proxy says: none is limited.
        assert keyless_statuses(server, LIMIT + 2) == [401] * (LIMIT + 2)
        # One client behind the proxy is limited as one.
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            same = [client.get("/api/v1/posts", headers={"X-Forwarded-For": "198.51.100.7"}).status_code
                    for _ in range(LIMIT + 1)]
        assert same == [401] * LIMIT + [429]
    finally:
        server.stop()
