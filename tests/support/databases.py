"""A database whose commits are real, for tests where work happens on other threads
or in other processes (which cannot join the test's rolled-back transaction).

SQLite: a file of the test's own. PostgreSQL: a schema of the test's own in the run's
database (TEST_DATABASE_URL), dropped afterwards, so nothing the test commits is seen
by the other tests of the run and nothing outside that database is touched."""
from __future__ import annotations

import secrets
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from persistence.migrate import upgrade
from tests import backends


@contextmanager
def committed_database_url(directory: Path):
    if backends.BACKEND != "postgres":
        url = f"sqlite:///{directory / 'committed.db'}"
        upgrade(url)
        yield url
        return
    server = backends.require_postgres()
    schema = f"committed_{secrets.token_hex(4)}"
    admin = create_engine(server)
    try:
        with admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        url = make_url(server).update_query_dict({"options": f"-csearch_path={schema}"})
        url = url.render_as_string(hide_password=False)
        upgrade(url)
        yield url
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
