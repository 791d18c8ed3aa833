"""Running the `socialpub` command line in tests: its output and status, and whether
a refused command left the database as it was. The `cli_database` and `workspace_id`
fixtures are offered to tests/cli/ by its conftest."""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from sqlalchemy import create_engine, inspect, text

from persistence.db import Database
from socialpub.cli import main
from socialpub.keys import service as api_keys
from tests.support.databases import committed_database_url


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(capsys, *argv: str) -> Result:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_json(capsys, *argv: str) -> dict:
    result = run(capsys, *argv, "--json")
    assert result.code == 0, result.err
    assert result.err == ""
    lines = result.out.splitlines()
    assert len(lines) == 1, result.out
    return json.loads(lines[0])


@contextmanager
def connected(url: str):
    """A connection of the test's own to the database at url; its engine is disposed after."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def database_state(url: str) -> dict[str, list]:
    """Every row of every table, to show a refused command changed nothing."""
    with connected(url) as connection:
        return {
            table: sorted(map(repr, connection.execute(text(f'SELECT * FROM "{table}"'))))
            for table in inspect(connection).get_table_names()
        }


def row_counts(url: str) -> dict[str, int]:
    return {table: len(rows) for table, rows in database_state(url).items()}


def assert_refused(capsys, url: str, *argv: str, says: str | None = None) -> str:
    before = database_state(url)
    result = run(capsys, *argv)
    assert result.code == 2, (result.out, result.err)
    assert result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("socialpub: error: ")
    if says is not None:
        assert says in lines[0], lines[0]
    after = database_state(url)
    assert {t: len(r) for t, r in after.items()} == {t: len(r) for t, r in before.items()}
    assert after == before
    return lines[0]


def principal_for(url: str, value: str):
    database = Database(url)
    try:
        with database.transaction() as session:
            return api_keys.resolve_principal(session=session, value=value)
    finally:
        database.dispose()


@pytest.fixture
def cli_database(tmp_path, monkeypatch, capsys) -> str:
    """A fresh SQLite database, named by DATABASE_URL as the CLI reads it."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    result = run(capsys, "db", "upgrade")
    assert result.code == 0, result.err
    return url


@pytest.fixture
def workspace_id(cli_database, capsys) -> str:
    return run_json(capsys, "workspace", "create", "--name", "Acme", "--plan", "business")["id"]


@pytest.fixture
def backend_cli_database(tmp_path, monkeypatch) -> str:
    """The run's backend, migrated, named by DATABASE_URL as the CLI reads it: a SQLite
    file, or a PostgreSQL schema of the test's own (dropped afterwards)."""
    with committed_database_url(tmp_path) as url:
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.delenv("REDIS_URL", raising=False)
        yield url


@contextmanager
def records_of(url: str):
    """A session on the CLI's database, to make records with the areas' factories."""
    database = Database(url)
    try:
        with database.transaction() as session:
            yield session
    finally:
        database.dispose()
