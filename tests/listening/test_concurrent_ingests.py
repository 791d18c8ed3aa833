"""Ingests at once, each adding to the same daily counts (the same days, monitors and
sentiments, in whatever order their items come): every signal is counted once and
none waits for ever. Real commits on a database of the test's own (PostgreSQL row
locks, or SQLite's one writer)."""
from __future__ import annotations

import datetime as dt
import random
import uuid

from sqlalchemy import func, select

from persistence.listening import ALL_SIGNALS, ListeningDaily, ListeningMonitor, ListeningSignal, ListeningSignalMonitor
from socialpub.listening import signals as listening
from socialpub.tenancy import TenantScope
from tests.support.factories import make_workspace
from tests.support.writers import at_once

TEXTS = ["I love Acme and Globex!", "Acme is awful, I hate it.", "Globex opens today.", "acme globex news"]
START = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)


def test_concurrent_ingests_count_every_signal_once(committed_database):
    with committed_database.transaction() as session:
        workspace = make_workspace(session)
        for name, keywords in (("Acme", ["acme"]), ("Globex", ["globex"])):
            session.add(ListeningMonitor(workspace_id=workspace.id, livemode=False, name=name, keywords=keywords,
                                         required_keywords=[], excluded_keywords=[], platforms=[], languages=[],
                                         enabled=True))
        workspace_id = workspace.id

    def ingesting(seed: int):
        def ingest():
            rng = random.Random(seed)
            for _ in range(5):
                items = [dict(platform="mastodon", external_id=uuid.uuid4().hex, content=rng.choice(TEXTS),
                              posted_at=START + dt.timedelta(hours=rng.randint(0, 72))) for _ in range(50)]
                # Overlapping external ids across threads: duplicates are counted once.
                items.append(dict(platform="mastodon", external_id=f"shared-{rng.randint(0, 3)}", content="acme",
                                  posted_at=START))
                with committed_database.transaction() as session:
                    listening.ingest(TenantScope.for_job(session, workspace_id, False, job="tests"), items)

        return ingest

    at_once({f"ingest {seed}": ingesting(seed) for seed in range(4)}, timeout=60)
    with committed_database.transaction() as session:
        stored = session.execute(select(func.count()).select_from(ListeningSignal)).scalar_one()
        links = session.execute(select(func.count()).select_from(ListeningSignalMonitor)).scalar_one()
        counted_all = session.execute(select(func.sum(ListeningDaily.signals))
                                      .where(ListeningDaily.monitor_id == ALL_SIGNALS)).scalar_one()
        counted_monitors = session.execute(select(func.sum(ListeningDaily.signals))
                                           .where(ListeningDaily.monitor_id != ALL_SIGNALS)).scalar_one()
    assert 4 * 5 * 50 < stored <= 4 * 5 * 51
    assert counted_all == stored and counted_monitors == links
