"""Backlogs of post targets as a burst leaves them, and the plans PostgreSQL makes for
statements over them: for the tests that check a statement reaches its rows by their
ids, whatever the table's statistics say."""
from __future__ import annotations

import datetime as dt
import uuid
from contextlib import contextmanager

import sqlalchemy as sa

from persistence.accounts import ConnectedAccount
from persistence.db import Database
from persistence.posts import Post, PostTarget
from persistence.types import utcnow
from tests.support import backends
from tests.support.databases import migrated_schema
from tests.support.factories import make_workspace

# Targets enough for PostgreSQL's plans to tell an index read from a scan.
BACKLOG = 3_000
STATUS_LED = ("ix_post_targets_lease", "ix_post_targets_due")


@contextmanager
def postgres_database(name: str):
    """A Database on a migrated PostgreSQL schema of its own, whose transactions
    commit (statistics and plans are the subject), disposed after."""
    with migrated_schema(backends.require_postgres(), name) as url:
        database = Database(url)
        try:
            yield database
        finally:
            database.dispose()


def changed_since_analyzed(database, now: dt.datetime, **changes) -> list[uuid.UUID]:
    """BACKLOG pending targets due an hour before `now`, the table's statistics
    taken, then every target given `changes`: statistics that know nothing of the
    change, as a burst leaves them."""
    with database.transaction() as session:
        ids = backlog(session, now - dt.timedelta(hours=1), BACKLOG)
        session.execute(sa.text("ANALYZE post_targets"))
    with database.transaction() as session:
        session.execute(sa.update(PostTarget).values(**changes))
    return ids


def backlog(session, due: dt.datetime, count: int, status: str = "pending") -> list[uuid.UUID]:
    """`count` targets due at `due`, as a burst of scheduled posts leaves them (`status`
    "published": as they are once published)."""
    workspace = make_workspace(session)
    account = ConnectedAccount(workspace_id=workspace.id, livemode=False, platform="twitter", connector="sandbox",
                               handle="@claims", status="active", options={})
    session.add(account)
    session.flush()
    now = utcnow()
    common = dict(workspace_id=workspace.id, livemode=False, created_at=now, updated_at=now)
    posts = [dict(common, id=uuid.uuid4(), content=f"Post {n}", platforms=["twitter"], status="scheduled",
                  scheduled_at=due) for n in range(count)]
    session.execute(sa.insert(Post).values(posts))
    targets = [dict(common, id=uuid.uuid4(), post_id=post["id"], account_id=account.id, platform="twitter",
                    status=status, attempts=0, comment_attempts=0, next_attempt_at=due + dt.timedelta(seconds=n))
               for n, post in enumerate(posts)]
    session.execute(sa.insert(PostTarget), targets)
    return [target["id"] for target in targets]


def plan(session, statement) -> str:
    compiled = statement.compile(dialect=session.bind.dialect, compile_kwargs={"literal_binds": True})
    return "\n".join(session.execute(sa.text(f"EXPLAIN {compiled}")).scalars())


def plans_of(session, run, *, starting: str) -> list[str]:
    """The plans of the statements starting with `starting` that `run()` sends on the
    session's connection, made for the parameters they were sent with."""
    sent = []

    def listen(_conn, _cursor, statement, parameters, _context, _executemany):
        if statement.startswith(starting):
            sent.append((statement, parameters))

    connection = session.connection()
    sa.event.listen(connection, "before_cursor_execute", listen)
    try:
        run()
    finally:
        sa.event.remove(connection, "before_cursor_execute", listen)
    return [
        "\n".join(row[0] for row in connection.exec_driver_sql(f"EXPLAIN {statement}", parameters))
        for statement, parameters in sent
    ]
