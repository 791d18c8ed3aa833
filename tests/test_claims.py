"""The claim hand-out (socialpub.claims): due rows read in order and taken by their
ids, and on PostgreSQL, with a backlog of due rows the table's statistics do not know
of (taken before the burst), a claim's update reaches its rows by their ids, not
through the backlog."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub import claims
from tests.support.backlogs import BACKLOG, STATUS_LED, postgres_database
from tests.support.backlogs import backlog as _backlog
from tests.support.backlogs import plan as _plan


def _due(now):
    return sa.and_(PostTarget.status == "pending", PostTarget.next_attempt_at <= now)


def test_only_the_rows_still_due_among_the_ids_are_taken(session):
    now = utcnow()
    ids = _backlog(session, now - dt.timedelta(hours=1), 6)
    first = claims.due_ids(session, PostTarget, _due(now), order_by=PostTarget.next_attempt_at, limit=3)
    assert first == ids[:3]  # in the order they fell due
    # One of them changed since it was read: not taken.
    session.execute(sa.update(PostTarget).where(PostTarget.id == ids[1]).values(status="published"))
    taken = claims.set_where_still(session, PostTarget, first, _due(now), {PostTarget.status: "publishing"})
    assert sorted(taken, key=ids.index) == [ids[0], ids[2]]
    statuses = dict(session.execute(sa.select(PostTarget.id, PostTarget.status)).all())
    assert [statuses[target] for target in ids] == ["publishing", "published", "publishing", "pending", "pending",
                                                    "pending"]


def test_a_claim_reads_what_it_takes_however_large_the_backlog():
    with postgres_database("claims") as database:
        now = utcnow()
        # Statistics older than the burst: taken when every target was published.
        with database.transaction() as session:
            _backlog(session, now - dt.timedelta(days=1), BACKLOG, status="published")
            session.execute(sa.text("ANALYZE post_targets"))
        with database.transaction() as session:
            ids = _backlog(session, now - dt.timedelta(hours=1), BACKLOG)
        with database.transaction() as session:
            first = claims.due_ids(session, PostTarget, _due(now), order_by=PostTarget.next_attempt_at, limit=200)
            assert first == ids[:200]
            # And the setting lent to the ordered read is back.
            assert session.execute(sa.text("SHOW enable_bitmapscan")).scalar_one() == "on"
            # Taken by their ids: no entry of the due index read (at this size, a scan
            # of the table's pages is cheaper than 200 lookups of the primary key).
            values = {PostTarget.status: "publishing"}
            plan = _plan(session, claims.still_statement(PostTarget, first, _due(now), values))
            assert not any(index in plan for index in STATUS_LED), plan
            # As a plain condition, the update would read every pending target through
            # an index led by the status.
            plain = _plan(session, sa.update(PostTarget).where(PostTarget.id.in_(first), _due(now)).values(values))
            assert any(index in plain for index in STATUS_LED), plain
            taken = claims.set_where_still(session, PostTarget, first, _due(now), values)
            assert sorted(taken, key=ids.index) == first
