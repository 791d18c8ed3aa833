"""The database handle: a pooled PostgreSQL connection that went idle is checked
before use and replaced when it died; one used a moment ago is not (a round trip per
transaction would cost a job committing after every platform call as much as its
work)."""
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from persistence import db as database_module
from persistence.db import make_engine
from tests.support import backends


@pytest.fixture
def postgres_engine():
    if backends.BACKEND != "postgres":
        pytest.skip("PostgreSQL pool behaviour")
    engine = make_engine(backends.postgres_url())
    yield engine
    engine.dispose()


def backend_pid(engine) -> int:
    with engine.connect() as connection:
        return connection.execute(text("SELECT pg_backend_pid()")).scalar_one()


def terminate(pid: int) -> None:
    admin = create_engine(backends.postgres_url())
    with admin.begin() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    admin.dispose()


@pytest.fixture
def pings(monkeypatch) -> list:
    seen = []
    real_ping = database_module.ping

    def counting_ping(dbapi_connection):
        seen.append(dbapi_connection)
        real_ping(dbapi_connection)

    monkeypatch.setattr(database_module, "ping", counting_ping)
    return seen


class TestIdleConnections:
    def test_a_connection_that_died_while_idle_is_replaced(self, postgres_engine, monkeypatch, pings):
        first = backend_pid(postgres_engine)
        terminate(first)
        # Idle for longer than the window: checked on checkout, found dead, replaced.
        monkeypatch.setattr(database_module, "IDLE_PING_SECONDS", 0.0)
        assert backend_pid(postgres_engine) != first
        assert len(pings) >= 2  # the dead one, then the new one

    def test_a_connection_used_a_moment_ago_is_not_pinged(self, postgres_engine, pings):
        backend_pid(postgres_engine)
        pings.clear()
        backend_pid(postgres_engine)
        assert pings == []

    def test_a_connection_that_died_a_moment_ago_fails_once_then_the_pool_recovers(self, postgres_engine):
        first = backend_pid(postgres_engine)
        terminate(first)
        with pytest.raises(Exception):
            backend_pid(postgres_engine)
        assert backend_pid(postgres_engine) != first



class TestSessionTimeZone:
    def test_connections_read_timestamps_in_utc_whatever_the_server_zone(self, postgres_engine):
        with postgres_engine.connect() as connection:
            assert connection.execute(text("SHOW timezone")).scalar_one() == "UTC"
            latest = connection.execute(text("SELECT TIMESTAMPTZ '9999-12-31 23:59:59+00'")).scalar_one()
        assert latest.year == 9999 and latest.utcoffset().total_seconds() == 0

    def test_the_urls_own_options_are_kept(self, postgres_engine):
        url = make_url(backends.postgres_url()).update_query_dict({"options": "-csearch_path=pg_catalog"})
        engine = make_engine(url.render_as_string(hide_password=False))
        try:
            with engine.connect() as connection:
                assert connection.execute(text("SHOW search_path")).scalar_one() == "pg_catalog"
                assert connection.execute(text("SHOW timezone")).scalar_one() == "UTC"
        finally:
            engine.dispose()


class TestReadSession:
    """An API GET reads through `Database.read_session`: on PostgreSQL its statements
    run without a transaction (no BEGIN and ROLLBACK round trips); the next session
    of the same thread and connection is transactional again."""

    @pytest.fixture
    def database(self):
        if backends.BACKEND != "postgres":
            pytest.skip("PostgreSQL sessions")
        database = database_module.Database(backends.postgres_url())
        yield database
        database.dispose()

    @staticmethod
    def transaction_status(session):
        return session.connection().connection.dbapi_connection.info.transaction_status

    def test_a_read_session_opens_no_transaction(self, database):
        from psycopg.pq import TransactionStatus

        session = database.read_session()
        assert session.execute(text("SELECT 1")).scalar_one() == 1
        assert self.transaction_status(session) == TransactionStatus.IDLE
        database.remove()

        session = database.session()
        session.execute(text("SELECT 1"))
        assert self.transaction_status(session) == TransactionStatus.INTRANS
        database.remove()

    def test_a_read_session_asked_inside_a_transaction_keeps_it(self, database):
        from psycopg.pq import TransactionStatus

        session = database.session()
        session.execute(text("SELECT 1"))
        assert database.read_session() is session
        assert self.transaction_status(session) == TransactionStatus.INTRANS
        database.remove()

    def test_a_value_read_keeps_the_connections_prepared_statements(self, database):
        # psycopg prepares a statement run five times on a connection and forgets all
        # of them (DEALLOCATE ALL) at a ROLLBACK: the key revision every request reads
        # runs in autocommit, so that the request's own statements stay prepared.
        with database.engine.connect() as connection:
            for _ in range(6):
                connection.execute(text("SELECT CAST(:n AS integer)"), {"n": 1})
                connection.commit()
        prepared = "SELECT count(*) FROM pg_prepared_statements"
        assert database.read_value(prepared) == 1  # the pool's one connection
        assert database.read_value(prepared) == 1

