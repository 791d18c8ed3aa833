"""Two real server processes sharing one Redis count one key exactly once: a key
allowed 20 requests per minute gets 20, however the requests are spread."""
from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from persistence.db import Database
from persistence.migrate import upgrade
from persistence.types import utcnow
from socialpub.scopes import ALL_SCOPES
from socialpub.keys import service as api_keys
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.processes import Server
from tests.support.ratelimit import forget_counters, limit_headers, redis_url_for_db
from tests.support.factories import OPERATOR

pytestmark = pytest.mark.slow

URL = "/api/v1/posts"
PER_MINUTE = 20
REQUESTS = 30


@pytest.fixture
def redis_url():
    return redis_url_for_db(backends.require_redis())


@pytest.fixture
def committed_keys(tmp_path):
    """A committed SQLite database (the servers are other processes) with two keys
    allowed PER_MINUTE requests a minute."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    upgrade(url)
    database = Database(url)
    values = {}
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Shared counters", plan="business")
        for name in ("sequential", "concurrent"):
            api_key, value = api_keys.create_api_key(
                session=session, actor=OPERATOR, workspace_id=workspace.id, name=name, scopes=list(ALL_SCOPES), per_minute=PER_MINUTE
            )
            # Marked as just used (last_used_at is written at most once a minute), so
            # the servers only read the database: the test is about the Redis counters.
            api_key.last_used_at = utcnow()
            values[name] = (api_key.id, value)
    database.dispose()
    return url, values


@pytest.fixture
def servers(tmp_path, redis_url, committed_keys):
    database_url, values = committed_keys
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SOCIALPUB_QUEUE_BACKEND": "inline",
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE": "100",
        "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE": "60",
        "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY": "10000",
    }
    started = []
    try:
        for index in range(2):
            started.append(Server(env, tmp_path / f"server{index}.log"))
        for server in started:
            server.wait_ready()
        yield started
    finally:
        for server in started:
            server.stop()
        forget_counters(redis_url, [f"key:{key_id}" for key_id, _ in values.values()])


def get(server: Server, key_value: str) -> httpx.Response:
    return httpx.get(f"{server.base_url}{URL}", headers={"Authorization": f"Bearer {key_value}"}, timeout=30)


class TestCountersSharedAcrossProcesses:
    def test_alternating_requests_are_counted_once_across_both_processes(self, servers, committed_keys):
        _, values = committed_keys
        _, value = values["sequential"]
        responses = [get(servers[i % 2], value) for i in range(REQUESTS)]
        assert [r.status_code for r in responses] == [200] * PER_MINUTE + [429] * (REQUESTS - PER_MINUTE)
        # One counter: Remaining counts down across the two processes without a gap.
        remaining = [limit_headers(r) for r in responses[:PER_MINUTE]]
        assert remaining == [(PER_MINUTE, PER_MINUTE - 1 - i) for i in range(PER_MINUTE)]
        refused = responses[PER_MINUTE]
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"
        assert int(refused.headers["Retry-After"]) >= 1

    def test_concurrent_requests_to_both_processes_allow_exactly_the_limit(self, servers, committed_keys):
        _, values = committed_keys
        _, value = values["concurrent"]
        with ThreadPoolExecutor(max_workers=10) as pool:
            responses = list(pool.map(lambda i: get(servers[i % 2], value), range(REQUESTS)))
        assert Counter(r.status_code for r in responses) == {200: PER_MINUTE, 429: REQUESTS - PER_MINUTE}
        assert all(r.json()["error"]["code"] == "rate_limit_exceeded" for r in responses if r.status_code == 429)
