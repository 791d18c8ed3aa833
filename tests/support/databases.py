"""A database whose commits are real, for tests where work happens on other threads
or in other processes (which cannot join the test's rolled-back transaction).

SQLite: a file of the test's own. PostgreSQL: a schema of the test's own in the run's
database (TEST_DATABASE_URL), dropped afterwards, so nothing the test commits is seen
by the other tests of the run and nothing outside that database is touched.

A pytest plugin (tests/conftest.py): `committed_database` is such a database, open;
`crash_database_url` is a whole PostgreSQL database of the test's own, for tests
whose worker processes are killed midway."""
from __future__ import annotations

import secrets
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from persistence.db import Database
from persistence.migrate import upgrade
from tests.support import backends


@contextmanager
def migrated_schema(server: str, prefix: str, revision: str = "head"):
    """A schema of its own (named `<prefix>_<random>`) in the PostgreSQL database at
    `server`, migrated (to `revision`): yields a URL whose connections use it; dropped
    afterwards."""
    schema = f"{prefix}_{secrets.token_hex(4)}"
    admin = create_engine(server)
    try:
        with admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        url = make_url(server).update_query_dict({"options": f"-csearch_path={schema}"})
        url = url.render_as_string(hide_password=False)
        upgrade(url, revision=revision)
        yield url
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@contextmanager
def committed_database_url(directory: Path):
    if backends.BACKEND != "postgres":
        url = f"sqlite:///{directory / 'committed.db'}"
        upgrade(url)
        yield url
        return
    with migrated_schema(backends.require_postgres(), "committed") as url:
        yield url


@pytest.fixture
def committed_database(tmp_path):
    """A `Database` on `committed_database_url`, disposed afterwards."""
    with committed_database_url(tmp_path) as url:
        database = Database(url)
        yield database
        database.dispose()


@pytest.fixture
def crash_database_url():
    """A database of its own on the test PostgreSQL server, dropped afterwards."""
    import psycopg

    server = make_url(backends.postgres_url())
    admin = server.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    name = f"socialpub_crash_{secrets.token_hex(4)}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        backends.unavailable(f"PostgreSQL at {server.host}:{server.port} is unreachable: {exc}")
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        upgrade(url)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def crash_database(crash_database_url):
    database = Database(crash_database_url)
    yield database
    database.dispose()
