"""The database a job runs against. A job function runs in an RQ worker process or
on the in-process pool; either way whoever starts the jobs installs the database
here once, and jobs open their own short transactions on it."""
from __future__ import annotations

from persistence.db import Database

_database: Database | None = None


def install(database: Database) -> None:
    global _database
    _database = database


def database() -> Database:
    global _database
    if _database is None:
        from socialpub.config import Settings

        _database = Database(Settings.from_env().database_url)
    return _database
