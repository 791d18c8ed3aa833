"""Two ingests at once, each of which would trip the rule: one incident, whichever
commits first; the other counts its signals and waits out the cooldown. Real commits
on a database of the test's own (PostgreSQL row locks, or SQLite's one writer)."""
from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import func, select

from persistence.crisis import CrisisCounter, CrisisIncident
from persistence.db import Database
from socialpub import clock
from socialpub.listening import signals as listening
from socialpub.tenancy import TenantScope
from tests.crisis.conftest import NOW
from tests.crisis.factories import make_rule
from tests.crisis.test_evaluation import NEGATIVE
from tests.support.databases import committed_database_url
from tests.support.factories import make_key, make_workspace


@pytest.fixture
def committed(tmp_path):
    with committed_database_url(tmp_path) as url:
        database = Database(url)
        yield database
        database.dispose()


def test_concurrent_ingests_open_one_incident(committed):
    with clock.installed(clock.FakeClock(NOW)):
        with committed.transaction() as session:
            workspace = make_workspace(session)
            key = make_key(session, workspace)
            make_rule(session, workspace, minimum_volume=3, window_minutes=10)
            principal = key.principal
        first_counted, first_may_commit = threading.Event(), threading.Event()
        errors = []

        def ingest(wait_for_other: bool):
            try:
                with committed.transaction() as session:
                    items = [dict(platform="bluesky", external_id=uuid.uuid4().hex, content=NEGATIVE, posted_at=NOW)
                             for _ in range(3)]
                    listening.ingest(TenantScope.of(session, principal), items)
                    if wait_for_other:
                        first_counted.set()
                        # The other ingest starts while this one holds its rows uncommitted.
                        first_may_commit.wait(10)
            except Exception as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        first = threading.Thread(target=ingest, args=(True,))
        first.start()
        assert first_counted.wait(10)
        second = threading.Thread(target=ingest, args=(False,))
        second.start()
        # The second is held (row locks, or SQLite's writer lock) until the first commits.
        second.join(0.5)
        first_may_commit.set()
        first.join(20)
        second.join(20)
        assert errors == []
        with committed.transaction() as session:
            assert session.execute(select(func.count()).select_from(CrisisIncident)).scalar_one() == 1
            # Both ingests were counted.
            assert session.execute(select(func.sum(CrisisCounter.negative))).scalar_one() == 6
