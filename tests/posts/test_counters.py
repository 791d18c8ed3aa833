"""The post counters (the posts list's totalItems) stay exact whatever writes posts:
every path of the product that changes a post, raw statements, bulk operations over
many posts, writers at once on PostgreSQL, and the migration that makes them from
the posts there are."""
from __future__ import annotations

import datetime as dt
import random
import uuid

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import delete, func, insert, select, text, update

from persistence.db import Database
from persistence.migrate import alembic_config, upgrade
from persistence.posts import Post, PostCounter, PostTarget, TargetStatus
from persistence.types import utcnow
from persistence.workspaces import Workspace
from socialpub import clock
from socialpub.posts import service as posts
from socialpub.publishing.service import settle_posts
from socialpub.tenancy import TenantScope
from tests.posts.test_changes import NOW, PATHS, Ctx, feeds  # noqa: F401 - feeds is a fixture
from tests.support import backends
from tests.support.bulk import started
from tests.support.databases import migrated_schema
from tests.support.factories import make_drafts, make_post, make_workspace
from tests.support.posts import assert_counters_exact, assert_list_totals_exact, counted_posts
from tests.support.writers import at_once


def _jobs(app):
    from tests.rss.conftest import Jobs

    return Jobs(app.app.extensions["socialpub"])


@pytest.mark.parametrize("path", [row[0] for row in PATHS], ids=[row[0].__name__ for row in PATHS])
def test_every_writer_of_posts_keeps_the_counters_exact(path, client, key, session, app, feeds, pipeline):  # noqa: F811
    with clock.installed(clock.FakeClock(NOW)):
        ctx = Ctx(client=client, key=key, session=session, jobs=_jobs(app), pipeline=pipeline, feeds=feeds)
        # Something of every status beside what the path changes.
        make_post(session, key.model.workspace, status="published", published_at=NOW)
        make_post(session, key.model.workspace, status="failed")
        make_post(session, key.model.workspace, archived_at=NOW)
        path(ctx)()
    assert_counters_exact(session)
    assert_list_totals_exact(client, key, session)


def test_raw_statements_are_counted(client, key, session):
    workspace = key.model.workspace
    ids = [uuid.UUID(i) for i in make_drafts(session, workspace, 30)]  # one multi-row INSERT
    assert_counters_exact(session)
    session.execute(update(Post).where(Post.id.in_(ids[:10])).values(status="scheduled"))
    session.execute(text("UPDATE posts SET status = 'published' WHERE status = 'scheduled'"))
    session.execute(update(Post).where(Post.id.in_(ids[10:15])).values(archived_at=utcnow()))
    session.execute(update(Post).where(Post.id.in_(ids[15:20])).values(livemode=True))
    session.execute(update(Post).where(Post.id.in_(ids[20:25])).values(content="only the content"))
    session.execute(delete(Post).where(Post.id.in_(ids[25:])))
    assert_counters_exact(session)
    assert_list_totals_exact(client, key, session)
    body = client.get("/api/v1/posts", headers=key.headers, params={"status": "published"}).json()
    assert body["pagination"]["totalItems"] == 10


def test_a_statement_writes_each_counter_it_changes_once(session, key):
    # However many posts a statement writes: a transaction writing one counter row
    # again and again makes each write walk the versions before it (PostgreSQL).
    if backends.BACKEND != "postgres":
        pytest.skip("PostgreSQL's counters (SQLite keeps one row a counter, without versions)")

    def counter_writes() -> int:
        return session.execute(text(
            "SELECT n_tup_ins + n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'post_counters'::regclass"
        )).scalar_one()

    before = counter_writes()
    ids = [uuid.UUID(i) for i in make_drafts(session, key.model.workspace, 200)]  # one multi-row INSERT
    session.execute(update(Post).where(Post.id.in_(ids)).values(status="scheduled"))
    session.execute(update(Post).where(Post.id.in_(ids)).values(content="counters unchanged"))
    assert counter_writes() - before == 3  # drafts +200; drafts -200 and scheduled +200
    assert_counters_exact(session)


def test_a_deleted_workspace_takes_its_counters_along(session, key):
    other = make_workspace(session, name="Gone")
    make_drafts(session, other, 5)
    make_drafts(session, key.model.workspace, 3)
    session.execute(delete(Workspace).where(Workspace.id == other.id))
    session.commit()
    assert session.execute(select(func.count()).select_from(PostCounter)
                           .where(PostCounter.workspace_id == other.id)).scalar_one() == 0
    assert_counters_exact(session)


@pytest.mark.parametrize("action, extra", [
    ("schedule", {"scheduledAt": "2030-01-01T09:00:00Z"}), ("archive", {}), ("delete", {}), ("publish", {}),
])
def test_bulk_operations_over_many_posts_keep_the_counters_exact(client, key, session, app, action, extra):
    ids = make_drafts(session, key.model.workspace, 260)
    session.commit()
    operation = started(client, key, action=action, postIds=ids[:250], **extra)
    _jobs(app).run()
    body = client.get(f"/api/v1/bulk/{operation['id']}", headers=key.headers).json()["data"]
    assert body["status"] == "completed" and body["succeeded"] == 250, body
    assert_counters_exact(session)
    assert_list_totals_exact(client, key, session)


# -- the migration's backfill ---------------------------------------------------------

def _revision_before_counters() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_revision("0027").down_revision


def _fill(url: str) -> None:
    """Posts of two workspaces, both modes, every status, some archived: made before
    the counters exist."""
    database = Database(url)
    rng = random.Random(5)
    try:
        with database.transaction() as session:
            workspaces = [Workspace(name=f"W{n}", plan="business") for n in range(2)]
            session.add_all(workspaces)
            session.flush()
            now = utcnow()
            rows = [dict(id=uuid.uuid4(), workspace_id=rng.choice(workspaces).id, livemode=rng.random() < 0.3,
                         created_at=now, updated_at=now, content="old", platforms=["twitter"],
                         status=rng.choice(("draft", "scheduled", "published", "failed")),
                         archived_at=now if rng.random() < 0.2 else None) for _ in range(300)]
            session.execute(insert(Post), rows)
    finally:
        database.dispose()


def _check_backfilled(url: str) -> None:
    database = Database(url)
    try:
        with database.transaction() as session:
            assert len(counted_posts(session)) > 20
            assert_counters_exact(session)
    finally:
        database.dispose()


def test_the_migration_counts_the_posts_there_are(tmp_path):
    if backends.BACKEND == "postgres":
        with migrated_schema(backends.require_postgres(), "backfill", revision=_revision_before_counters()) as url:
            _fill(url)
            upgrade(url)
            _check_backfilled(url)
        return
    url = f"sqlite:///{tmp_path / 'backfill.db'}"
    upgrade(url, revision=_revision_before_counters())
    _fill(url)
    upgrade(url)
    _check_backfilled(url)


# -- writers at once (PostgreSQL) ------------------------------------------------------

def test_writers_at_once_keep_the_counters_exact(committed_database):
    """Posts created, deleted, scheduled, archived and settled by publishing (mixed
    outcomes, ten posts a transaction, as a slice's end settles them) from eight
    threads at once in one workspace: no writer fails or waits for ever, and every
    counter equals a real count."""
    backends.services_pass_only("PostgreSQL row locks")
    later = utcnow() + dt.timedelta(days=1)
    with committed_database.transaction() as session:
        workspace_id = make_workspace(session).id
    with committed_database.transaction() as session:
        scope = TenantScope.for_job(session, workspace_id, False, job="tests")
        drafts = [posts.add_post(scope, content=f"d{n}", platforms=["twitter"]).id for n in range(160)]
        scheduled = [posts.add_post(scope, content=f"s{n}", platforms=["twitter"], scheduled_at=later).id
                     for n in range(150)]

    def writing(name, batches, apply):
        def write():
            for batch in batches:
                with committed_database.transaction() as session:
                    apply(TenantScope.for_job(session, workspace_id, False, job=name), batch)

        return write

    def create(scope, n):
        posts.add_post(scope, content=f"new {n}", platforms=["twitter"], scheduled_at=later if n % 2 else None)

    def remove(scope, ids):
        for post_id in ids:
            posts.remove_post(scope, scope.get(Post, post_id, resource="post", for_update=True))

    def archive_or_schedule(scope, ids):
        for n, post_id in enumerate(ids):
            post = scope.get(Post, post_id, resource="post", for_update=True)
            if n % 2:
                posts.archive_post(scope, post)
            else:
                posts.change_post(scope, post, scheduled_at=later)

    def publish(scope, ids):
        targets = scope.session.execute(select(PostTarget).where(PostTarget.post_id.in_(ids))).scalars()
        for n, target in enumerate(targets):
            target.status = TargetStatus.FAILED if n % 3 == 0 else TargetStatus.PUBLISHED
            target.published_at = utcnow() if target.status == TargetStatus.PUBLISHED else None
        scope.session.flush()
        settle_posts(scope.session, ids)

    def chunks(ids, size):
        return [ids[at:at + size] for at in range(0, len(ids), size)]

    rng = random.Random(3)
    rng.shuffle(scheduled)
    writers = [
        ("create a", range(0, 80, 2), create),
        ("create b", range(1, 80, 2), create),
        ("delete a", chunks(drafts[:40], 4), remove),
        ("delete b", chunks(drafts[40:80], 4), remove),
        ("bulk", chunks(drafts[80:], 20), archive_or_schedule),
        *[(f"publish {n}", chunks(scheduled[n::3], 10), publish) for n in range(3)],
    ]
    at_once({name: writing(name, batches, apply) for name, batches, apply in writers}, timeout=120)
    with committed_database.transaction() as session:
        assert_counters_exact(session)
        totals = {key[2:]: value for key, value in counted_posts(session).items()}
        assert totals[("published", False)] + totals[("failed", False)] == 150
        # A counter gets a row of a writer's own only when every row it can see is
        # held: a few rows for the eight writers (each of which wrote it dozens of
        # times), never one a change.
        rows = session.execute(select(func.count()).select_from(PostCounter).group_by(
            PostCounter.livemode, PostCounter.status, PostCounter.archived)).scalars().all()
        assert max(rows) <= 17, rows
