"""The database handle (cross-cutting): engine, session factory and the request-scoped session."""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import orjson
import psycopg
from psycopg.connection import _WAIT_INTERVAL
from sqlalchemy import create_engine, event, exc, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, scoped_session, sessionmaker

logger = logging.getLogger("socialpub.database")


@dataclass(frozen=True)
class Deadlines:
    """How long PostgreSQL work may take, so that a database that hangs (a lock held
    by someone else, a runaway statement, a connection left inside a transaction)
    costs a bounded wait and a 503, not a worker. The server-side ones are sent as
    connection options; 0 leaves one off (the default: migrations and scripts may
    run long). Connecting and waiting for a pooled connection are always bounded."""

    connect_seconds: float = 5
    pool_seconds: float = 10.0
    statement_seconds: float = 0
    lock_seconds: float = 0
    idle_in_transaction_seconds: float = 0
    # Client-side: how long one round trip may wait for the server's answer. The
    # server-side deadlines need a server that runs; one that is frozen (stopped, or
    # its machine swapping) still accepts and acknowledges, and answers nothing.
    response_seconds: float = 0

    @classmethod
    def from_settings(cls, settings) -> "Deadlines":
        return cls(
            connect_seconds=settings.database_connect_timeout_seconds,
            pool_seconds=settings.database_pool_timeout_seconds,
            statement_seconds=settings.database_statement_timeout_seconds,
            lock_seconds=settings.database_lock_timeout_seconds,
            idle_in_transaction_seconds=settings.database_idle_in_transaction_timeout_seconds,
            response_seconds=settings.database_response_timeout_seconds,
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
            json_deserializer=orjson.loads,
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
        # JSON columns (a post's platforms...) are parsed in C: psycopg is handed it.
        json_deserializer=orjson.loads,
        connect_args={
            "connect_timeout": deadlines.connect_seconds,
            "options": connection_options(parsed.query.get("options"), deadlines),
        },
    )
    _ping_idle_connections(engine)
    if deadlines.response_seconds > 0:
        _bound_each_round_trip(engine, deadlines.response_seconds, deadlines.connect_seconds)
    return engine


class ResponseDeadlineConnection(psycopg.Connection):
    """A psycopg connection whose every round trip (statement, fetch, commit,
    rollback) waits at most `response_seconds` for the server. Past it the connection
    is closed, since the server may still be working on the request, its gate is told
    the database stopped answering, and the call raises OperationalError: SQLAlchemy
    then discards the connection (and the pool's others, as likely dead), and the
    caller answers 503."""

    response_seconds: float | None = None
    gate: "DatabaseGate | None" = None
    # How long connecting may take. psycopg raises a connect_timeout under 2 s to 2 s
    # (libpq's rule); a gate's class holds its own bound, which is kept as given.
    connect_seconds: float | None = None

    @classmethod
    def _connect_gen(cls, conninfo=""):
        """psycopg's connecting steps, given up at `connect_seconds`. Its wait hands
        every step back at least each tenth of a second, ready or not, so the bound
        is checked between them; psycopg reports the raise as a connection timeout."""
        steps = super()._connect_gen(conninfo)
        if not cls.connect_seconds:
            return (yield from steps)
        deadline = time.monotonic() + cls.connect_seconds
        try:
            waiting_on = next(steps)
            while True:
                ready = yield waiting_on
                if time.monotonic() >= deadline:
                    steps.close()
                    raise psycopg.errors._WaitTimeout(f"no connection within {cls.connect_seconds} s")
                waiting_on = steps.send(ready)
        except StopIteration as done:
            return done.value

    def wait(self, gen, interval=_WAIT_INTERVAL, timeout=None):
        try:
            return super().wait(gen, interval, timeout if timeout is not None else self.response_seconds)
        # Private to psycopg (pinned in requirements.lock): what its wait raises when
        # the timeout passes, the connection's state then unknown.
        except psycopg.errors._WaitTimeout:
            self.pgconn.finish()
            if self.gate is not None:
                self.gate.went_down(f"no answer within {self.response_seconds} s")
            raise psycopg.OperationalError(
                f"the database did not answer within {self.response_seconds} s; the connection was closed"
            ) from None


class DatabaseGate:
    """Connections to a database that stopped answering fail at once. Without it,
    every request of an outage would wait out a connect deadline
    or a response deadline of its own. The first failure closes the gate and logs it
    once; a background probe connects every PROBE_SECONDS and opens the gate as soon
    as the database answers, so no request waits on the probe."""

    PROBE_SECONDS = 0.2

    def __init__(self, response_seconds: float, connect_seconds: float = 0):
        self.response_seconds = response_seconds
        # Its connections' class, bounding their connecting as given: a connection
        # begun in the moment between a freeze and the gate closing holds its request
        # no longer than that (psycopg alone would hold it at least 2 s).
        self.connection_class = type("GatedConnection", (ResponseDeadlineConnection,), {
            "connect_seconds": connect_seconds or None, "response_seconds": response_seconds,
        })
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._connect_arguments: tuple | None = None

    def connect(self, cargs, cparams) -> ResponseDeadlineConnection:
        self._connect_arguments = (cargs, cparams)
        if self._closed.is_set():
            raise psycopg.OperationalError("the database is unreachable; it is checked again in the background")
        try:
            return self._new_connection()
        except psycopg.OperationalError as error:
            self.went_down(str(error).strip())
            raise

    def _new_connection(self) -> ResponseDeadlineConnection:
        cargs, cparams = self._connect_arguments
        connection = self.connection_class.connect(*cargs, **cparams)
        connection.gate = self
        return connection

    def went_down(self, reason: str) -> None:
        with self._lock:
            if self._closed.is_set() or self._connect_arguments is None:
                return
            self._closed.set()
        logger.warning("database unreachable; new connections fail at once until it answers",
                       extra={"reason": reason[:200]})
        threading.Thread(target=self._probe, name="database-probe", daemon=True).start()

    def _probe(self) -> None:
        while True:
            try:
                connection = self._new_connection()
                try:
                    connection.gate = None  # a probe that times out only tries again
                    connection.execute("SELECT 1")
                finally:
                    connection.close()
            except psycopg.Error:
                time.sleep(self.PROBE_SECONDS)
                continue
            self._closed.clear()
            logger.warning("database reachable again")
            return


def _bound_each_round_trip(engine: Engine, response_seconds: float, connect_seconds: float) -> None:
    gate = DatabaseGate(response_seconds, connect_seconds)

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect, _record, cargs, cparams):
        return gate.connect(cargs, cparams)


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


class OneCommit:
    """One transaction on a connection of its own (or, bound to one connection in the
    tests, a savepoint of theirs), with a session joined to it by savepoints: a
    service's `session.commit()` releases a savepoint, `session.rollback()` undoes
    back to it, and only `commit()` here makes the whole durable. `close()` rolls back
    whatever was not committed. Used by one thread at a time."""

    def __init__(self, database: "Database"):
        self._lock = database._one_connection
        if self._lock is not None:
            self._lock.acquire()
        try:
            if database.engine is not None:
                self.connection = database.engine.connect()
                self._owns_connection = True
                self.transaction = self.connection.begin()
            else:
                self.connection = database.sessionmaker.kw["bind"]
                self._owns_connection = False
                self.transaction = self.connection.begin_nested()
        except BaseException:
            if self._lock is not None:
                self._lock.release()
            raise
        self.session = Session(bind=self.connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
        self.committed = False

    def commit(self) -> None:
        self.session.commit()
        self.transaction.commit()
        self.committed = True

    def close(self) -> None:
        try:
            self.session.close()
            if self.transaction.is_active:
                self.transaction.rollback()
        except exc.DBAPIError:
            logger.warning("a one-commit unit's connection failed while it was closed; discarded", exc_info=True)
        finally:
            try:
                if self._owns_connection:
                    self.connection.close()
            finally:
                if self._lock is not None:
                    self._lock.release()


class Database:
    """Owns one engine. `session()` is the request-scoped (thread-local) session the
    API uses; `transaction()` is a self-contained unit of work for jobs and the CLI."""

    def __init__(self, url: str | None = None, *, bind=None, join_savepoints: bool = False, deadlines: Deadlines | None = None):
        self.engine = make_engine(url, deadlines) if bind is None else None
        bind = bind if bind is not None else self.engine
        options = {"join_transaction_mode": "create_savepoint"} if join_savepoints else {}
        self.sessionmaker = sessionmaker(bind=bind, expire_on_commit=False, **options)
        self.scoped = scoped_session(self.sessionmaker)
        # Bound to one connection (tests run each in one outer transaction), every
        # session shares it, and a connection serves one thread at a time: the
        # transactions of threads (a publishing slice's calls to the sandbox, which
        # records them) take turns. An engine's pool gives each its own connection.
        self._one_connection = threading.RLock() if bind is not self.engine else None

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

    def read_session(self) -> Session:
        """The thread's session, for work that only reads (an API GET). On PostgreSQL
        its statements run in autocommit: no BEGIN before them and no ROLLBACK after,
        two round trips of the four a page read took; each statement still sees one
        snapshot (a page and its total are one statement, see envelope.paginate).
        SQLite (its BEGIN IMMEDIATE, see make_engine) and a session bound to one
        connection (tests) keep their transaction."""
        session = self.scoped()
        if self.engine is not None and self.engine.dialect.name == "postgresql" and not session.in_transaction():
            session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        return session

    def remove(self) -> None:
        """Ends the thread's session, after its request was answered. A connection that
        died meanwhile (the database gone) cannot roll back: it is discarded, the
        answer already given stands, and the thread's next request starts afresh."""
        try:
            self.scoped.remove()
        except exc.DBAPIError:
            logger.warning("the session's connection failed while it was closed; discarded", exc_info=True)
            self.scoped.registry.clear()

    def one_commit(self) -> "OneCommit":
        """A session whose work commits once, when its owner says (`OneCommit.commit`),
        whatever the services it is handed commit on the way: their commits become
        savepoints of one transaction. For a request whose change and stored answer
        must be one commit (an Idempotency-Key request)."""
        return OneCommit(self)

    @contextmanager
    def transaction(self):
        with self._one_connection or nullcontext():
            session = self.sessionmaker()
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise
            finally:
                session.close()

    def read_value(self, sql: str):
        """One value of a read of one row, outside any transaction: on SQLite no
        BEGIN IMMEDIATE, so it never waits behind a writer (WAL readers don't), where
        a session would take the write lock first (see make_engine)."""
        if self.engine is None:  # bound to one connection (tests): its transaction
            with self.transaction() as session:
                return session.execute(text(sql)).scalar_one()
        if self.engine.dialect.name != "sqlite":
            # In autocommit: no BEGIN before it, and no ROLLBACK after it, which would
            # also make psycopg forget the connection's prepared statements.
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                return connection.exec_driver_sql(sql).scalar_one()
        # The driver's own connection, in autocommit (make_engine): a plain SELECT.
        connection = self.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(sql)
                return cursor.fetchone()[0]
            finally:
                cursor.close()
        except self.engine.dialect.loaded_dbapi.Error as error:
            # As SQLAlchemy would raise it, so that the error handlers know it (503).
            raise exc.DBAPIError.instance(sql, None, error, self.engine.dialect.loaded_dbapi.Error) from error
        finally:
            connection.close()

    def ping(self) -> None:
        with self.sessionmaker() as session:
            session.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.scoped.remove()
        if self.engine is not None:
            self.engine.dispose()
