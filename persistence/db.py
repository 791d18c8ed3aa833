"""The database handle (cross-cutting): engine, session factory and the request-scoped session."""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, event, exc, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, scoped_session, sessionmaker


@dataclass(frozen=True)
class Deadlines:
    """How long PostgreSQL work may take, so that a database that hangs (a lock held
    by someone else, a runaway statement, a connection left inside a transaction)
    costs a bounded wait and a 503, not a worker. The server-side ones are sent as
    connection options; 0 leaves one off (the default: migrations and scripts may
    run long). Connecting and waiting for a pooled connection are always bounded."""

    connect_seconds: int = 5
    pool_seconds: float = 10.0
    statement_seconds: float = 0
    lock_seconds: float = 0
    idle_in_transaction_seconds: float = 0

    @classmethod
    def from_settings(cls, settings) -> "Deadlines":
        return cls(
            connect_seconds=settings.database_connect_timeout_seconds,
            pool_seconds=settings.database_pool_timeout_seconds,
            statement_seconds=settings.database_statement_timeout_seconds,
            lock_seconds=settings.database_lock_timeout_seconds,
            idle_in_transaction_seconds=settings.database_idle_in_transaction_timeout_seconds,
        )

    def server_options(self) -> list[str]:
        given = (
            ("statement_timeout", self.statement_seconds),
            ("lock_timeout", self.lock_seconds),
            ("idle_in_transaction_session_timeout", self.idle_in_transaction_seconds),
        )
        # PostgreSQL counts these in milliseconds; under one is not "off".
        return [f"-c {name}={max(1, round(seconds * 1000))}" for name, seconds in given if seconds > 0]


def make_engine(url: str, deadlines: Deadlines | None = None) -> Engine:
    deadlines = deadlines or Deadlines()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_pre_ping=True,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin,
            # so SAVEPOINTs and rollbacks behave as on PostgreSQL.
            dbapi_connection.isolation_level = None
            # WAL and a busy timeout let the API threads and the in-process job
            # threads write to one file without "database is locked".
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection):
            # IMMEDIATE takes the write lock up front (waiting up to busy_timeout).
            # A deferred transaction that reads and then writes is refused at once
            # when another writer committed in between; on the embedded default
            # serialising transactions is the price of never failing one.
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    engine = create_engine(
        url,
        pool_size=10,
        max_overflow=10,
        pool_timeout=deadlines.pool_seconds,
        connect_args={
            "connect_timeout": deadlines.connect_seconds,
            "options": connection_options(parsed.query.get("options"), deadlines),
        },
    )
    _ping_idle_connections(engine)
    return engine


def connection_options(given, deadlines: Deadlines) -> str:
    """The startup options of every connection: the deadlines, then the URL's own
    options (a search_path, say; connect_args would otherwise replace them, and a
    deadline the URL sets wins over the settings'), then the UTC time zone, which
    must hold: timestamps come back in UTC whatever the server's zone (one near the
    end of year 9999 would not fit a zone east of UTC, and psycopg could not read it)."""
    given = " ".join(given) if isinstance(given, tuple) else (given or "")
    return " ".join(part for part in (*deadlines.server_options(), given, "-c timezone=UTC") if part)


# A pooled connection used this recently is taken to be alive. pool_pre_ping would
# ping on every checkout: a round trip per transaction, as much as the work itself for
# a job that commits after each platform call. A connection that died within this
# window fails one statement; SQLAlchemy then invalidates the whole pool.
IDLE_PING_SECONDS = 5.0


def _ping_idle_connections(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connected(_dbapi_connection, record):
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection, record):
        if record is not None:
            record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _check_if_idle(dbapi_connection, record, _proxy):
        if time.monotonic() - record.info.get("returned_at", 0.0) >= IDLE_PING_SECONDS:
            ping(dbapi_connection)


def ping(dbapi_connection) -> None:
    """A round trip on a pooled connection; DisconnectionError if it fails, on which the
    pool discards the connection and checks out another (up to 3 times)."""
    try:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        dbapi_connection.rollback()
    except Exception as error:  # noqa: BLE001 - any failure means: not usable
        raise exc.DisconnectionError(str(error)) from error


class Database:
    """Owns one engine. `session()` is the request-scoped (thread-local) session the
    API uses; `transaction()` is a self-contained unit of work for jobs and the CLI."""

    def __init__(self, url: str | None = None, *, bind=None, join_savepoints: bool = False, deadlines: Deadlines | None = None):
        self.engine = make_engine(url, deadlines) if bind is None else None
        bind = bind if bind is not None else self.engine
        options = {"join_transaction_mode": "create_savepoint"} if join_savepoints else {}
        self.sessionmaker = sessionmaker(bind=bind, expire_on_commit=False, **options)
        self.scoped = scoped_session(self.sessionmaker)

    @classmethod
    def from_settings(cls, settings) -> "Database":
        """The database of a running service, with its deadlines (Settings)."""
        return cls(settings.database_url, deadlines=Deadlines.from_settings(settings))

    @property
    def dialect(self) -> str:
        bind = self.sessionmaker.kw["bind"]
        return bind.dialect.name

    def session(self) -> Session:
        return self.scoped()

    def remove(self) -> None:
        self.scoped.remove()

    @contextmanager
    def transaction(self):
        session = self.sessionmaker()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def ping(self) -> None:
        with self.sessionmaker() as session:
            session.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.scoped.remove()
        if self.engine is not None:
            self.engine.dispose()
