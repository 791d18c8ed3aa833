"""The journeys of tests/sdk drive a real server (uvicorn, on the run's backend)
through the Python client `make sdk` generates from the served contract. This file
makes that client importable (generating it when build/sdk is missing or older than
the contract) and provides the server, its keys, and publishing as a worker would do
it. The journeys themselves see only the typed `SdkServer` (tests/sdk/journey.py)."""
from __future__ import annotations

import fcntl
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import backends
from tests.support.databases import committed_database_url
from tests.support.processes import PROJECT_ROOT, Server

ROOT = Path(PROJECT_ROOT)
SDK_DIR = ROOT / "build" / "sdk"
SDK_MARKER = SDK_DIR / "socialpub_client" / "__init__.py"
# What the client is generated from: the contract's sources, the code that bundles
# them, and the generator's settings (its class overrides).
SDK_CONFIG = ROOT / "scripts" / "sdk-config.yaml"
CONTRACT_SOURCES = [ROOT / "openapi", ROOT / "socialpub" / "contract_bundle.py", SDK_CONFIG]
# Small enough for the 413 journey to cross with one post, large enough for the rest.
MAX_BODY_BYTES = 8192
THROTTLED_PER_MINUTE = 2


def _newest_contract_change() -> float:
    newest = 0.0
    for source in CONTRACT_SOURCES:
        files = [source] if source.is_file() else [path for path in source.rglob("*") if path.is_file()]
        newest = max([newest, *(path.stat().st_mtime for path in files)])
    return newest


def _sdk_is_current() -> bool:
    return SDK_MARKER.exists() and SDK_MARKER.stat().st_mtime >= _newest_contract_change()


def _ensure_sdk() -> None:
    """Generates the client with `make sdk` when it is missing or stale. The two passes
    of `make test` run side by side: a lock keeps them from generating it at once."""
    SDK_DIR.parent.mkdir(parents=True, exist_ok=True)
    with open(SDK_DIR.parent / "sdk.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _sdk_is_current():
            return
        if backends.IN_CI:
            pytest.exit(
                "build/sdk is missing or older than the contract: run `make sdk` before the tests "
                "(`make test` does it)", returncode=3,
            )
        generated = subprocess.run(["make", "--no-print-directory", "sdk"], cwd=ROOT, capture_output=True, text=True)
        if generated.returncode != 0:
            pytest.exit(f"`make sdk` failed:\n{generated.stdout}\n{generated.stderr}", returncode=3)


_ensure_sdk()
if str(SDK_DIR) not in sys.path:
    sys.path.insert(0, str(SDK_DIR))

from tests.sdk.journey import Keys, SdkServer  # noqa: E402  (needs the client on sys.path)
from tests.support.factories import OPERATOR


@pytest.fixture(scope="session")
def sdk_database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with committed_database_url(tmp_path_factory.mktemp("sdk")) as url:
        yield url


@pytest.fixture(scope="session")
def sdk_server(tmp_path_factory: pytest.TempPathFactory, sdk_database_url: str) -> Iterator[SdkServer]:
    from persistence.db import Database
    from socialpub.keys import service as api_keys
    from socialpub.scopes import ALL_SCOPES
    from socialpub.workspaces import service as workspaces

    database = Database(sdk_database_url)
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="SDK journeys", plan="business")

        def key(scopes: tuple[str, ...] | list[str], **limits: int) -> str:
            value: str
            _, value = api_keys.create_api_key(
                session=session, actor=OPERATOR, workspace_id=workspace.id, name="sdk journeys", scopes=list(scopes), **limits,
            )
            return value

        keys = Keys(
            full=key(ALL_SCOPES),
            read_only=key(["posts:read"]),
            throttled=key(ALL_SCOPES, per_minute=THROTTLED_PER_MINUTE),
        )
    env = {
        **os.environ, "DATABASE_URL": sdk_database_url, "SOCIALPUB_SECRET_KEY": secrets.token_urlsafe(32),
        "SOCIALPUB_QUEUE_BACKEND": "inline", "SOCIALPUB_LOG_LEVEL": "WARNING",
        "SOCIALPUB_MAX_BODY_BYTES": str(MAX_BODY_BYTES),
        "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE": "10000", "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE": "10000",
        "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY": "100000",
    }
    env.pop("REDIS_URL", None)
    server = Server(env, tmp_path_factory.mktemp("sdk-server") / "server.log")
    workers = _PublishingWorkers(database, sdk_database_url)
    try:
        server.wait_ready()
        yield SdkServer(
            base_url=f"{server.base_url}/api/v1", keys=keys, max_body_bytes=MAX_BODY_BYTES,
            throttled_per_minute=THROTTLED_PER_MINUTE, run_publishing=workers.run, refuse_posts_on=workers.refuse_posts_on,
        )
    finally:
        server.stop()
        database.dispose()


class _PublishingWorkers:
    """What the workers would do for the server (it runs no scheduler of its own): the
    dispatcher and its jobs, in this process, against the server's database."""

    def __init__(self, database: Any, database_url: str):
        self.database = database
        self.database_url = database_url

    def run(self) -> None:
        from socialpub.publishing import dispatch
        from socialpub.publishing.jobs import SLICE_JOBS
        from tests.support.settings import test_settings
        from workers import context
        from workers.queue import InlineQueue

        settings = test_settings(self.database_url)
        queue = InlineQueue(workers=1)
        # The tests in this process share the job context: theirs is put back after.
        saved = (context._database, context._queue, context._settings)
        context.install(self.database, queue=queue, settings=settings)
        try:
            for _ in range(10):
                handed_out = dispatch.dispatch_due(
                    database=self.database, queue=queue, settings=settings, slice_jobs=SLICE_JOBS,
                )
                queue.drain()
                if handed_out == 0:
                    break
        finally:
            context._database, context._queue, context._settings = saved
            queue.close()

    def refuse_posts_on(self, platform: str, refuse: bool) -> None:
        """The workspace's sandbox account of `platform` refuses every post (or not)."""
        from sqlalchemy import select

        from persistence.accounts import ConnectedAccount

        with self.database.transaction() as session:
            account = session.execute(
                select(ConnectedAccount).where(ConnectedAccount.platform == platform, ConnectedAccount.connector == "sandbox")
            ).scalar_one()
            account.options = {"failPermanent": True} if refuse else {}
