"""Two threads sending the same request with the same Idempotency-Key at once, to
two server processes sharing one database: one post, never two. On the run's
backend: a SQLite file, or PostgreSQL (a schema of the test's own)."""
import os
import threading

import httpx
import pytest
from sqlalchemy import func, select

from persistence.db import Database
from persistence.posts import Post
from socialpub.keys import service as api_keys
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.databases import committed_database_url
from tests.support.processes import Server
from tests.support.factories import OPERATOR

pytestmark = pytest.mark.slow


@pytest.fixture
def database_url_of_servers(tmp_path):
    with committed_database_url(tmp_path) as url:
        yield url


@pytest.fixture
def two_servers(tmp_path, database_url_of_servers):
    url = database_url_of_servers
    database = Database(url)
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Concurrent", plan="business")
        _, value = api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, name="k", scopes=["posts:write"])
    env = {
        **os.environ, "DATABASE_URL": url, "SOCIALPUB_LOG_LEVEL": "WARNING",
        "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE": "10000", "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE": "10000",
    }
    env.pop("REDIS_URL", None)
    servers = [Server(env, tmp_path / f"server{i}.log") for i in range(2)]
    try:
        for server in servers:
            server.wait_ready()
        yield servers, value, database
    finally:
        for server in servers:
            server.stop()
        database.dispose()


def test_concurrent_repeats_create_one_post(two_servers):
    servers, value, database = two_servers
    assert database.dialect == ("postgresql" if backends.BACKEND == "postgres" else "sqlite")
    for round_number in range(5):
        key = f"race-{round_number}"
        results = [None] * 4
        start = threading.Barrier(4)

        def send(index):
            start.wait()
            results[index] = httpx.post(
                f"{servers[index % 2].base_url}/api/v1/posts",
                headers={"Authorization": f"Bearer {value}", "Idempotency-Key": key},
                json={"content": f"Race {round_number}", "platforms": ["twitter"]},
                timeout=30,
            )

        threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        fresh = [r for r in results if r.status_code == 201 and "idempotent-replayed" not in r.headers]
        replayed = [r for r in results if r.status_code == 201 and r.headers.get("idempotent-replayed") == "true"]
        busy = [r for r in results if r.status_code == 409]
        assert len(fresh) == 1, [(r.status_code, r.text) for r in results]
        assert len(fresh) + len(replayed) + len(busy) == 4
        assert all(r.json()["data"]["id"] == fresh[0].json()["data"]["id"] for r in replayed)
        assert all(r.json()["error"]["code"] == "conflict" and r.headers["retry-after"] == "1" for r in busy)
    with database.transaction() as session:
        assert session.execute(select(func.count()).select_from(Post)).scalar_one() == 5
