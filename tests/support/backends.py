"""Which database and Redis the suite runs against.

SOCIALPUB_TEST_BACKEND=sqlite (default): a temporary SQLite file, in-process jobs.
SOCIALPUB_TEST_BACKEND=postgres: TEST_DATABASE_URL and TEST_REDIS_URL. Under CI
(CI=true) a missing PostgreSQL or Redis fails the run; elsewhere Redis-only tests skip.

Tests of PostgreSQL or Redis themselves (crash tests with RQ workers, shared rate-limit
counters, database deadlines) run in the PostgreSQL + Redis pass only: the SQLite pass
touches neither service, so `make test` runs the two passes side by side.
"""
from __future__ import annotations

import os

import pytest

BACKEND = os.environ.get("SOCIALPUB_TEST_BACKEND", "sqlite")
IN_CI = os.environ.get("CI", "").lower() == "true"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def unavailable(reason: str):
    """A service the test needs is missing: a failure under CI, a skip elsewhere."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def postgres_url() -> str:
    return os.environ.get("TEST_DATABASE_URL") or DEFAULT_PG


def redis_url() -> str | None:
    url = os.environ.get("TEST_REDIS_URL")
    if url:
        return url
    if IN_CI:
        return "redis://127.0.0.1:6379/0"
    return None


def services_pass_only(what: str) -> None:
    """Skips a test of PostgreSQL or Redis in the SQLite pass, which runs beside the
    PostgreSQL + Redis pass and must not share their databases with it."""
    if BACKEND != "postgres":
        pytest.skip(f"{what}: runs in the PostgreSQL + Redis pass")


def require_redis() -> str:
    """The test Redis URL, reachable; a failure under CI, a skip elsewhere."""
    services_pass_only("Redis")
    url = redis_url()
    problem = None
    if url is None:
        problem = "TEST_REDIS_URL is not set"
    else:
        try:
            from redis import Redis

            Redis.from_url(url, socket_connect_timeout=2).ping()
        except Exception as exc:  # noqa: BLE001
            problem = f"Redis at {url} is unreachable: {exc}"
    if problem:
        unavailable(problem)
    return url


def require_postgres() -> str:
    services_pass_only("PostgreSQL")
    url = postgres_url()
    try:
        import sqlalchemy

        engine = sqlalchemy.create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect():
            pass
        engine.dispose()
    except Exception as exc:  # noqa: BLE001
        unavailable(f"PostgreSQL at {url} is unreachable: {exc}")
    return url
