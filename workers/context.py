"""What a job runs with (cross-cutting: the one way jobs reach the runtime): the
database, the queue to hand follow-up work to, and the settings. A job function runs
in an RQ worker process or on the in-process pool; either way whoever starts the jobs
installs these once."""
from __future__ import annotations

from persistence.db import Database
from socialpub.config import Settings
from workers.queue import make_queue

_database: Database | None = None
_queue = None
_settings = None


def install(database: Database, *, queue=None, settings=None) -> None:
    global _database, _queue, _settings
    _database = database
    if queue is not None:
        _queue = queue
    if settings is not None:
        _settings = settings


def settings():
    global _settings
    if _settings is None:
        _settings = Settings.from_env()
    return _settings


def database() -> Database:
    global _database
    if _database is None:
        _database = Database.from_settings(settings())
    return _database


def queue():
    global _queue
    if _queue is None:
        _queue = make_queue(settings())
    return _queue
