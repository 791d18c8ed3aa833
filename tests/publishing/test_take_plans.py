"""On PostgreSQL, a slice takes its claims, and gives back those it did not reach, by
their ids alone: every claim of a kind ever taken keeps an entry under its status in
the status-led indexes until a vacuum, and a read through them (a bitmap of every
such entry, which no read marks dead) grew with every target a burst had published."""
from __future__ import annotations

import sqlalchemy as sa

from persistence.posts import PostTarget
from persistence.types import utcnow
from socialpub.publishing import dispatch, publications, runner
from socialpub.publishing.dispatch import PUBLISH
from tests.support.backlogs import STATUS_LED, changed_since_analyzed, plans_of, postgres_database
from tests.support.settings import test_settings


def test_claims_are_taken_and_given_back_by_their_ids():
    with postgres_database("takes") as database:
        ids = changed_since_analyzed(database, utcnow(), status="publishing", claim_token="dispatched")
        settings = test_settings(str(database.engine.url))
        with database.transaction() as session:
            [take] = plans_of(
                session, lambda: runner.take(session, publications._TAKE_PUBLICATION, ids[:16], "dispatched", settings),
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
