"""Jobs and CLI commands reach the database with the service's deadlines (statement,
lock, idle-in-transaction, connect, pool), as the API does: a lock held elsewhere
or a hung connection costs them a bounded wait too. The deadlines themselves are
tested against PostgreSQL in test_database_deadlines.py; here, that these entry
points hand them to the engine."""
from __future__ import annotations

import pytest

from persistence import db as persistence_db
from persistence.db import Deadlines
from socialpub.cli import common as cli_common
from socialpub.config import Settings
from workers import context as job_context

URL = "postgresql+psycopg://nobody@127.0.0.1:1/nothing"  # never connected to


@pytest.fixture
def engines(monkeypatch):
    """The (url, deadlines) of every engine made, instead of making it."""
    made = []

    def record(url, deadlines=None):
        made.append((url, deadlines))
        return object()

    monkeypatch.setattr(persistence_db, "make_engine", record)
    return made


@pytest.fixture
def settings():
    return Settings(
        database_url=URL,
        database_statement_timeout_seconds=3.0,
        database_lock_timeout_seconds=1.5,
        database_idle_in_transaction_timeout_seconds=20.0,
        database_connect_timeout_seconds=2,
        database_pool_timeout_seconds=4.0,
    )


def test_cli_commands_use_the_deadlines(engines, settings):
    cli_common.database(settings)
    assert engines == [(URL, Deadlines.from_settings(settings))]
    assert engines[0][1].server_options() == [
        "-c statement_timeout=3000", "-c lock_timeout=1500", "-c idle_in_transaction_session_timeout=20000",
    ]


def test_jobs_use_the_deadlines(engines, settings, monkeypatch):
    monkeypatch.setattr(job_context, "_database", None)
    monkeypatch.setattr(job_context, "_settings", settings)
    job_context.database()
    assert engines == [(URL, Deadlines.from_settings(settings))]
