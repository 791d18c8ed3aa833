"""A server killed in the middle of an Idempotency-Key request, at each point between
its change and its answer: the repeat after the key's lock never makes the change
twice. Killed before the change and its answer commit, nothing happened, and the
repeat makes the post; killed after, the repeat replays the answer."""
from __future__ import annotations

import os
import sys
import time

import httpx
import pytest
from sqlalchemy import func, select

from persistence.db import Database
from persistence.posts import Post
from socialpub.keys import service as api_keys
from socialpub.workspaces import service as workspaces
from tests.support.databases import committed_database_url
from tests.support.factories import OPERATOR
from tests.support.processes import PROJECT_ROOT, Server

LOCK_SECONDS = 1
BODY = {"content": "Exactly once", "platforms": ["twitter"]}


def _server(tmp_path, env, name, crash_at=None):
    environment = {**env, **({"SOCIALPUB_TEST_CRASH_AT": crash_at} if crash_at else {})}
    server = Server(
        environment, tmp_path / f"{name}.log",
        command=lambda port: [sys.executable, str(PROJECT_ROOT / "tests/faults/crashing_server.py"), str(port)],
    )
    server.wait_ready()
    return server


@pytest.mark.parametrize(("point", "replayed"), [("after_change", False), ("after_commit", True)])
def test_a_request_killed_midway_is_done_once(tmp_path, point, replayed):
    with committed_database_url(tmp_path) as url:
        database = Database(url)
        with database.transaction() as session:
            workspace = workspaces.create_workspace(session=session, name="Crash", plan="business")
            _, value = api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, name="k",
                                               scopes=["posts:write"], mode="test")
        env = {**os.environ, "DATABASE_URL": url, "SOCIALPUB_LOG_LEVEL": "WARNING",
               "SOCIALPUB_IDEMPOTENCY_LOCK_SECONDS": str(LOCK_SECONDS)}
        env.pop("REDIS_URL", None)
        headers = {"Authorization": f"Bearer {value}", "Idempotency-Key": f"crash-{point}"}
        dying = _server(tmp_path, env, "dying", crash_at=point)
        try:
            with pytest.raises(httpx.TransportError):
                httpx.post(f"{dying.base_url}/api/v1/posts", headers=headers, json=BODY, timeout=10)
            dying.process.wait(timeout=10)
            assert dying.process.returncode == 137, dying.output()
        finally:
            dying.stop()
        with database.engine.connect() as connection:
            assert connection.execute(select(func.count()).select_from(Post)).scalar_one() == (1 if replayed else 0)

        time.sleep(LOCK_SECONDS + 0.2)  # the dead request's hold on the key runs out
        server = _server(tmp_path, env, "server")
        try:
            repeat = httpx.post(f"{server.base_url}/api/v1/posts", headers=headers, json=BODY, timeout=10)
            again = httpx.post(f"{server.base_url}/api/v1/posts", headers=headers, json=BODY, timeout=10)
        finally:
            server.stop()
        assert repeat.status_code == 201, repeat.text
        assert (repeat.headers.get("idempotent-replayed") == "true") is replayed
        assert again.headers.get("idempotent-replayed") == "true" and again.json() == repeat.json()
        with database.engine.connect() as connection:
            ids = connection.execute(select(Post.id)).scalars().all()
        assert [str(post_id) for post_id in ids] == [repeat.json()["data"]["id"]]
        database.dispose()
