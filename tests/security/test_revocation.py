"""A key revoked, or rolled past its grace, with the CLI stops working at the very next
request in every API process, although each process keeps resolved keys for minutes
(SOCIALPUB_API_KEY_CACHE_SECONDS=300 here). Two real server processes and the real
CLI: on the embedded default (SQLite, no Redis: the key revision is read from the
database on each cache hit) and on PostgreSQL + Redis (it comes back with the
rate-limit script)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from redis import Redis
from sqlalchemy import update

from persistence.db import Database
from persistence.keys import ApiKey
from persistence.migrate import upgrade
from persistence.types import utcnow
from socialpub import keycache
from socialpub.keys import service as api_keys
from socialpub.scopes import ALL_SCOPES
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.databases import migrated_schema
from tests.support.processes import PROJECT_ROOT, Server
from tests.support.ratelimit import redis_url_for_db
from tests.support.factories import OPERATOR

pytestmark = pytest.mark.slow

SOCIALPUB = Path(sys.executable).parent / "socialpub"
REVOCATION_REDIS_DB = 13  # a database of this test's own: it resets the revision


@pytest.fixture(params=["embedded", "postgres+redis"])
def deployment(request, tmp_path):
    """(database URL, Redis URL or None) the servers and the CLI share."""
    if request.param == "embedded":
        url = f"sqlite:///{tmp_path / 'shared.db'}"
        upgrade(url)
        yield url, None
        return
    redis_url = redis_url_for_db(backends.require_redis(), REVOCATION_REDIS_DB)
    connection = Redis.from_url(redis_url)
    connection.delete(keycache.REVISION_KEY)
    with migrated_schema(backends.require_postgres(), "revocation") as url:
        yield url, redis_url
    connection.delete(keycache.REVISION_KEY)
    connection.close()


def environment(database_url: str, redis_url: str | None) -> dict:
    env = {
        **os.environ, "DATABASE_URL": database_url, "SOCIALPUB_QUEUE_BACKEND": "inline",
        "SOCIALPUB_LOG_LEVEL": "WARNING", "SOCIALPUB_API_KEY_CACHE_SECONDS": "300",
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def new_keys(database_url: str, count: int) -> list[tuple[uuid.UUID, str]]:
    database = Database(database_url)
    try:
        with database.transaction() as session:
            workspace = workspaces.create_workspace(session=session, name="Revocation", plan="business")
            keys = []
            for number in range(count):
                api_key, value = api_keys.create_api_key(
                    session=session, actor=OPERATOR, workspace_id=workspace.id, name=f"key {number}", scopes=list(ALL_SCOPES)
                )
                api_key.last_used_at = utcnow()  # the servers only read
                keys.append((api_key.id, value))
        return keys
    finally:
        database.dispose()


def statuses(servers: list[Server], value: str) -> list[int]:
    return [
        httpx.get(f"{server.base_url}/api/v1/posts", headers={"Authorization": f"Bearer {value}"}, timeout=30).status_code
        for server in servers
    ]


def cli(env: dict, *argv: str) -> str:
    finished = subprocess.run(
        [str(SOCIALPUB), *argv], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout


def test_revoked_and_rolled_keys_stop_at_the_next_request_in_every_process(deployment, tmp_path):
    database_url, redis_url = deployment
    (revoked_id, revoked), (rolled_id, rolled), (edited_id, edited) = new_keys(database_url, 3)
    env = environment(database_url, redis_url)
    servers = [Server(env, tmp_path / f"server{index}.log") for index in range(2)]
    try:
        for server in servers:
            server.wait_ready()
        for value in (revoked, rolled, edited):
            assert statuses(servers, value) == [200, 200]

        # The control: a key revoked behind the service's back, without moving the key
        # revision, is still served from each process's cache. What follows is the
        # revision's doing, not a cache miss.
        database = Database(database_url)
        with database.transaction() as session:
            session.execute(update(ApiKey).where(ApiKey.id == edited_id).values(revoked_at=utcnow()))
        database.dispose()
        assert statuses(servers, edited) == [200, 200]

        cli(env, "key", "revoke", str(revoked_id))
        assert statuses(servers, revoked) == [401, 401]

        new_value = cli(env, "key", "roll", str(rolled_id), "--json")
        assert statuses(servers, rolled) == [401, 401]
        assert statuses(servers, json.loads(new_value)["key"]) == [200, 200]
        # And the key revoked behind its back is read again too, since the revision moved.
        assert statuses(servers, edited) == [401, 401]
    finally:
        for server in servers:
            server.stop()
