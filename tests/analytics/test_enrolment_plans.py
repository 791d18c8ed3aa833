"""On PostgreSQL, enrolling a slice's targets reads them by their ids, however many
targets are published and whatever the table's statistics say: taken before a burst,
they know of no published target, and a plain condition on the status led the read
through every published target (a cost growing with the backlog, 25 ms a slice at
100,000 and 300 ms once its statement was prepared with a generic plan)."""
from __future__ import annotations

import sqlalchemy as sa

from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub.analytics import dispatch
from tests.support.backlogs import STATUS_LED, changed_since_analyzed, plans_of, postgres_database


def test_enrolment_reads_its_targets_by_their_ids_however_many_are_published():
    with postgres_database("enrolment") as database:
        now = utcnow()
        ids = changed_since_analyzed(
            database, now, status="published", published_at=now, external_id=PostTarget.id.cast(sa.String),
        )
        with database.transaction() as session:
            [plan] = plans_of(session, lambda: dispatch.enrol_targets(session, ids[:200], now=now),
                              starting="SELECT post_targets.id")
            # No index led by the status (at this size, a scan of the table's pages is
            # cheaper than 200 lookups of the primary key; at 100,000 the key is used).
            assert not any(index in plan for index in STATUS_LED), plan
            enrolled = session.execute(sa.text("SELECT count(*) FROM analytics_posts")).scalar_one()
            assert enrolled == 200
