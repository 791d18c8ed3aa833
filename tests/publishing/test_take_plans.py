"""On PostgreSQL, a slice takes its claims, and gives back those it did not reach, by
their ids alone: every claim of a kind ever taken keeps an entry under its status in
the status-led indexes until a vacuum, and a read through them (a bitmap of every
such entry, which no read marks dead) grew with every target a burst had published."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from persistence.db import Database
from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub.publishing import dispatch, publications, runner
from socialpub.publishing.dispatch import PUBLISH
from tests.support import backends
from tests.support.backlogs import backlog, plans_of
from tests.support.databases import migrated_schema

BACKLOG = 3_000
STATUS_LED = ("ix_post_targets_lease", "ix_post_targets_due")


class _Settings:
    publish_lease_seconds = 300


def test_claims_are_taken_and_given_back_by_their_ids():
    with migrated_schema(backends.require_postgres(), "takes") as url:
        database = Database(url)
        try:
            now = utcnow()
            with database.transaction() as session:
                ids = backlog(session, now - dt.timedelta(hours=1), BACKLOG)
                session.execute(sa.text("ANALYZE post_targets"))  # statistics of no claim taken
            with database.transaction() as session:
                session.execute(sa.update(PostTarget).values(status="publishing", claim_token="dispatched"))
            with database.transaction() as session:
                [take] = plans_of(
                    session, lambda: runner.take(session, publications._TAKE_PUBLICATION, ids[:16], "dispatched",
                                                 _Settings),
                    starting="UPDATE post_targets",
                )
                [give_back] = plans_of(
                    session, lambda: dispatch.give_back(session, PUBLISH, ids[16:32], {"dispatched"}),
                    starting="UPDATE post_targets",
                )
                for plan in (take, give_back):
                    assert "post_targets_pkey" in plan and not any(index in plan for index in STATUS_LED), plan
                statuses = dict(session.execute(
                    sa.select(PostTarget.id, PostTarget.status).where(PostTarget.id.in_(ids[:32]))
                ).all())
                assert [statuses[target_id] for target_id in ids[:32]] == ["publishing"] * 16 + ["pending"] * 16
        finally:
            database.dispose()
