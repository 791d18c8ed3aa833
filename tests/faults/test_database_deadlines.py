"""PostgreSQL deadlines: statement_timeout, lock_timeout and
idle_in_transaction_session_timeout come from the settings and travel as connection
options beside the UTC time zone (and the URL's own options); waiting for a pooled
connection is bounded too. A request blocked on a lock another connection holds is
a 503 service_unavailable within the deadline, not a worker that waits for ever.

The PostgreSQL tests run when TEST_DATABASE_URL is set (under CI=true a missing
PostgreSQL fails them), in a schema of their own that they drop afterwards."""
from __future__ import annotations

import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from sqlalchemy import create_engine, event, text

from persistence.db import Database, DatabaseGate, Deadlines, connection_options, make_engine
from socialpub.app import create_app
from socialpub.config import Settings
from tests.support import backends
from tests.support.databases import migrated_schema
from tests.support.errors import assert_envelope
from tests.support.factories import make_key, make_post, make_workspace
from tests.support.settings import test_settings
from workers import context as job_context


class TestConnecting:
    def test_a_server_that_accepts_and_never_answers_is_given_up_at_the_connect_deadline(self):
        # A frozen PostgreSQL: the kernel completes the handshake, nothing answers.
        with socket.create_server(("127.0.0.1", 0)) as silent:
            port = silent.getsockname()[1]
            started = time.monotonic()
            with pytest.raises(psycopg.errors.ConnectionTimeout):
                DatabaseGate(response_seconds=1.0, connect_seconds=0.3).connection_class.connect(
                    host="127.0.0.1", port=port, user="nobody", dbname="none", connect_timeout=1,
                )
            took = time.monotonic() - started
        # psycopg alone raises any connect_timeout under 2 s to 2 s.
        assert 0.3 <= took < 1.5

    def test_without_a_connect_deadline_the_connection_is_psycopgs_own(self):
        # No bound given: psycopg's own connecting runs unchanged (here, refused).
        assert DatabaseGate(response_seconds=1.0).connection_class.connect_seconds is None
        with socket.create_server(("127.0.0.1", 0)) as closed:
            port = closed.getsockname()[1]
        with pytest.raises(psycopg.OperationalError):
            DatabaseGate(response_seconds=1.0).connection_class.connect(host="127.0.0.1", port=port, dbname="none")


class TestOptions:
    def test_the_settings_become_connection_options_before_the_time_zone(self):
        settings = Settings(
            database_statement_timeout_seconds=2.5, database_lock_timeout_seconds=0.5,
            database_idle_in_transaction_timeout_seconds=60,
        )
        options = connection_options("-csearch_path=tenant", Deadlines.from_settings(settings))
        assert options == (
            "-c statement_timeout=2500 -c lock_timeout=500 -c idle_in_transaction_session_timeout=60000"
            " -csearch_path=tenant -c timezone=UTC"
        )

    def test_zero_leaves_a_deadline_off(self):
        deadlines = Deadlines(statement_seconds=0, lock_seconds=0.0004, idle_in_transaction_seconds=0)
        assert connection_options(None, deadlines) == "-c lock_timeout=1 -c timezone=UTC"
        # Migrations and scripts (make_engine without deadlines) may run long.
        assert connection_options(("-ca=1", "-cb=2"), Deadlines()) == "-ca=1 -cb=2 -c timezone=UTC"

    def test_defaults_and_environment(self, monkeypatch):
        defaults = Deadlines.from_settings(Settings())
        assert defaults == Deadlines(
            connect_seconds=5, pool_seconds=10.0, statement_seconds=30.0, lock_seconds=10.0, idle_in_transaction_seconds=300.0,
            response_seconds=35.0,
        )
        for name, value in {
            "SOCIALPUB_DATABASE_CONNECT_TIMEOUT_SECONDS": "3", "SOCIALPUB_DATABASE_POOL_TIMEOUT_SECONDS": "4",
            "SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS": "5", "SOCIALPUB_DATABASE_LOCK_TIMEOUT_SECONDS": "6",
            "SOCIALPUB_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS": "7",
            "SOCIALPUB_DATABASE_RESPONSE_TIMEOUT_SECONDS": "8",
        }.items():
            monkeypatch.setenv(name, value)
        assert Deadlines.from_settings(Settings.from_env()) == Deadlines(3, 4.0, 5.0, 6.0, 7.0, 8.0)

    def test_the_engine_uses_them(self):
        deadlines = Deadlines(connect_seconds=3, pool_seconds=1.5, statement_seconds=2)
        engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none?options=-csearch_path%3Dx", deadlines)
        handed = {}

        @event.listens_for(engine, "do_connect")
        def capture(_dialect, _record, _args, params):
            handed.update(params)
            raise ConnectionAbortedError("captured, not connecting")

        try:
            assert engine.pool.timeout() == 1.5
            with pytest.raises(Exception):
                engine.connect()
        finally:
            engine.dispose()
        # What psycopg is given: the URL's options merged, not replaced.
        assert handed["connect_timeout"] == 3
        assert handed["options"] == "-c statement_timeout=2000 -csearch_path=x -c timezone=UTC"


def postgres_url() -> str:
    if not os.environ.get("TEST_DATABASE_URL") and not backends.IN_CI:
        pytest.skip("TEST_DATABASE_URL is not set")
    return backends.require_postgres()


@pytest.fixture
def schema_url():
    """A schema of this test's own on the test PostgreSQL, migrated; dropped after."""
    with migrated_schema(postgres_url(), "faults") as url:
        yield url


@pytest.fixture
def deadline_app(schema_url):
    saved = (job_context._database, job_context._queue, job_context._settings)
    applications = []

    def build(**deadlines):
        settings = test_settings(schema_url, queue_backend="inline", **deadlines)
        application = create_app(settings)  # its own Database, from the settings
        applications.append(application)
        return application

    yield build
    for application in applications:
        application.app.extensions["socialpub"].close()
    job_context._database, job_context._queue, job_context._settings = saved


def seeded(database: Database):
    with database.transaction() as session:
        workspace = make_workspace(session)
        key = make_key(session, workspace)
        post = make_post(session, workspace)
        return key, post.id


class HeldLock:
    """Another connection holding a lock on the posts table until released."""

    def __init__(self, url: str, statement: str):
        self.engine = create_engine(url)
        self.connection = self.engine.connect()
        self.transaction = self.connection.begin()
        self.connection.execute(text(statement))

    def release(self):
        self.transaction.rollback()
        self.connection.close()
        self.engine.dispose()


@pytest.mark.parametrize(
    "deadlines, bound",
    [
        (dict(database_lock_timeout_seconds=0.5, database_statement_timeout_seconds=0), 0.5),
        (dict(database_lock_timeout_seconds=0, database_statement_timeout_seconds=0.8), 0.8),
    ],
    ids=["lock_timeout", "statement_timeout"],
)
@pytest.mark.parametrize(
    "lock, method, path",
    [
        ("SELECT 1 FROM posts FOR UPDATE", "PATCH", "/api/v1/posts/{post}"),
        ("LOCK TABLE posts IN ACCESS EXCLUSIVE MODE", "GET", "/api/v1/posts"),
    ],
    ids=["row-lock", "table-lock"],
)
def test_a_request_blocked_on_a_lock_is_503_within_the_deadline(deadline_app, schema_url, deadlines, bound, lock, method, path):
    application = deadline_app(**deadlines)
    key, post_id = seeded(application.app.extensions["socialpub"].database)
    url = path.format(post=post_id)
    body = {"content": "Changed"} if method == "PATCH" else None
    with application.test_client() as client:
        assert client.request(method, url, headers=key.headers, json=body).status_code == 200
        held = HeldLock(schema_url, lock)
        # In a thread: a request that waits past the bound fails the test, and is let
        # go by releasing the lock.
        pool = ThreadPoolExecutor(1)
        try:
            started = time.monotonic()
            response = pool.submit(client.request, method, url, headers=key.headers, json=body).result(timeout=bound + 2.0)
            elapsed = time.monotonic() - started
        finally:
            held.release()
            pool.shutdown(wait=True)
        assert_envelope(response, 503, "service_unavailable")
        assert response.headers["retry-after"]
        assert bound <= elapsed < bound + 2.0, elapsed
        # The lock gone, the same request goes through.
        assert client.request(method, url, headers=key.headers, json=body).status_code == 200


def test_every_connection_carries_the_deadlines(deadline_app):
    application = deadline_app(
        database_statement_timeout_seconds=7, database_lock_timeout_seconds=3,
        database_idle_in_transaction_timeout_seconds=45, database_pool_timeout_seconds=2,
    )
    database = application.app.extensions["socialpub"].database
    assert database.engine.pool.timeout() == 2
    with database.engine.connect() as connection:
        shown = {
            name: connection.execute(text(f"SHOW {name}")).scalar_one()
            for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "TimeZone")
        }
        schema = connection.execute(text("SELECT current_schema()")).scalar_one()
    assert shown == {
        "statement_timeout": "7s", "lock_timeout": "3s", "idle_in_transaction_session_timeout": "45s", "TimeZone": "UTC",
    }
    assert schema.startswith("faults_")  # the URL's own options are kept


def test_a_session_idle_in_a_transaction_is_closed_by_the_server(deadline_app):
    application = deadline_app(database_idle_in_transaction_timeout_seconds=0.3)
    database = application.app.extensions["socialpub"].database
    # A connection that runs a statement (psycopg opens a transaction) and then idles.
    raw = database.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
        closed = threading.Event()
        watcher = create_engine(database.engine.url.render_as_string(hide_password=False))
        deadline = time.monotonic() + 5
        with watcher.connect() as probe:
            while time.monotonic() < deadline:
                alive = probe.execute(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}).scalar_one()
                probe.rollback()
                if not alive:
                    closed.set()
                    break
                time.sleep(0.05)
        watcher.dispose()
        assert closed.is_set(), "the server kept the idle transaction open"
    finally:
        raw.invalidate()
