"""Two ingests at once, each of which would trip the rule: one incident, whichever
commits first; the other counts its signals and waits out the cooldown. Real commits
on a database of the test's own (PostgreSQL row locks, or SQLite's one writer)."""
from __future__ import annotations

import threading
import uuid

from sqlalchemy import func, select

from persistence.crisis import CrisisCounter, CrisisIncident
from socialpub import clock
from socialpub.listening import signals as listening
from socialpub.tenancy import TenantScope
from tests.crisis.conftest import NOW
from tests.crisis.factories import make_rule
from tests.crisis.test_evaluation import NEGATIVE
from tests.support.factories import make_key, make_workspace
from tests.support.writers import Writers


def test_concurrent_ingests_open_one_incident(committed_database):
    with clock.installed(clock.FakeClock(NOW)):
        with committed_database.transaction() as session:
            workspace = make_workspace(session)
            key = make_key(session, workspace)
            make_rule(session, workspace, minimum_volume=3, window_minutes=10)
            principal = key.principal
        first_counted, first_may_commit = threading.Event(), threading.Event()

        def ingest(wait_for_other: bool):
            with committed_database.transaction() as session:
                items = [dict(platform="bluesky", external_id=uuid.uuid4().hex, content=NEGATIVE, posted_at=NOW)
                         for _ in range(3)]
                listening.ingest(TenantScope.of(session, principal), items)
                if wait_for_other:
                    first_counted.set()
                    # The other ingest starts while this one holds its rows uncommitted.
                    first_may_commit.wait(10)

        writers = Writers()
        writers.start("first", lambda: ingest(True))
        assert first_counted.wait(10)
        second = writers.start("second", lambda: ingest(False))
        # The second is held (row locks, or SQLite's writer lock) until the first commits.
        second.join(0.5)
        first_may_commit.set()
        writers.finish(20)
        with committed_database.transaction() as session:
            assert session.execute(select(func.count()).select_from(CrisisIncident)).scalar_one() == 1
            # Both ingests were counted.
            assert session.execute(select(func.sum(CrisisCounter.negative))).scalar_one() == 6
