from __future__ import annotations

import os

import pytest
from sqlalchemy import create_engine, text

from persistence.db import Database, make_engine
from persistence.migrate import upgrade
from socialpub.app import create_app
from socialpub.keycache import principal_cache
from socialpub.ratelimit import RateLimiter
from socialpub.serialization import CompiledSchema
from workers import context as job_context
from workers.queue import InlineQueue

# Before the shared helpers are first imported: their asserts then explain a failure
# as the tests' own do.
pytest.register_assert_rewrite("tests.support")

from tests.support import backends  # noqa: E402
# One browser for the run, whichever folders' browser tests ask for it.
from tests.support.browser import playwright_browser  # noqa: E402,F401
from tests.support.factories import make_key, make_workspace  # noqa: E402
from tests.support.jobs import HeldQueue  # noqa: E402
from tests.support.settings import test_settings  # noqa: E402

# Every response the suite reads was dumped by the compiled plans and by marshmallow
# alike: any difference fails the test that produced it.
CompiledSchema.verify_against_marshmallow = True

# The fixtures that tests of more than one folder use, beside the helpers they wrap.
pytest_plugins = [
    "tests.support.databases",
    "tests.support.fakes",
    "tests.support.platform_servers",
    "tests.support.processes",
    "tests.support.publishing",
    "tests.support.webhook_receiver",
]

os.environ.setdefault("SOCIALPUB_LOG_LEVEL", "WARNING")


@pytest.fixture(scope="session")
def database_url(tmp_path_factory):
    if backends.BACKEND == "postgres":
        url = backends.require_postgres()
        # A clean schema for the run, whatever an earlier run left: migrations are the
        # only way it is made.
        engine = create_engine(url)
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
        engine.dispose()
        upgrade(url)
        return url
    path = tmp_path_factory.mktemp("db") / "socialpub.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def engine(database_url):
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def test_redis_url():
    if backends.BACKEND != "postgres":
        return None
    url = backends.require_redis()
    from redis import Redis

    Redis.from_url(url).flushdb()
    return url


@pytest.fixture
def db(engine):
    """A Database whose every session joins one outer transaction, rolled back after
    the test: commits in the code under test become savepoints."""
    connection = engine.connect()
    outer = connection.begin()
    database = Database(bind=connection, join_savepoints=True)
    principal_cache.clear()
    yield database
    database.remove()
    outer.rollback()
    connection.close()
    principal_cache.clear()


@pytest.fixture
def session(db):
    session = db.sessionmaker()
    yield session
    session.close()


@pytest.fixture
def settings(database_url, test_redis_url):
    return test_settings(database_url, test_redis_url)


@pytest.fixture(scope="session")
def _apps():
    """Apps by settings, built once: building one parses the whole contract."""
    built = {}
    yield built
    for application in built.values():
        application.app.extensions["socialpub"].queue.close()


@pytest.fixture
def app(settings, db, _apps):
    application = _apps.get(settings)
    if application is None:
        application = _apps[settings] = create_app(settings, database=db)
    runtime = application.app.extensions["socialpub"]
    runtime.database = db
    runtime.rate_limiter = RateLimiter(settings)
    if isinstance(runtime.queue, InlineQueue):
        runtime.queue = HeldQueue()
    job_context.install(db, queue=runtime.queue, settings=settings)
    return application


@pytest.fixture
def client(app):
    with app.test_client() as test_client:
        yield test_client


@pytest.fixture
def workspace(session):
    return make_workspace(session)


@pytest.fixture
def key(session, workspace):
    """A test-mode key holding every scope."""
    return make_key(session, workspace)


@pytest.fixture
def live_key(session, workspace):
    return make_key(session, workspace, mode="live")
