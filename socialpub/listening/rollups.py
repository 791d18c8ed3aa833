"""Daily counts of signals (`ListeningDaily`), kept in each ingest's transaction: how
many signals of each sentiment were posted on each UTC day, in the workspace's mode
(every signal, `ALL_SIGNALS`) and per monitor they matched.

An ingest adds its new signals with one adding upsert (`add_ingest`, claims.insert_adding): its rows summed in
memory first (one row per day, monitor and sentiment the ingest touched, a handful
for a batch of 100), sent in (day, monitor, sentiment) order, so that concurrent
ingests lock the rows they share in the same order and never deadlock. The stats
(socialpub.listening.stats) read the whole days of a period from here, a few rows a
day, however many signals were stored.
"""
from __future__ import annotations

from collections import defaultdict

from persistence.listening import ALL_SIGNALS, ListeningDaily
from socialpub import claims

_KEY = ["workspace_id", "livemode", "day", "monitor_id", "sentiment_label"]


def day_rows(rows: list[dict], links: dict) -> list[dict]:
    """The counts of new signals' `rows` (as `signals.ingest` inserts them) and of the
    monitors each matched (`links`, by signal id), by day, monitor and sentiment, in
    key order."""
    counts: dict[tuple, int] = defaultdict(int)
    for row in rows:
        tenant, day, label = (row["workspace_id"], row["livemode"]), row["posted_at"].date(), row["sentiment_label"]
        counts[(tenant, day, ALL_SIGNALS, label)] += 1
        for link in links.get(row["id"], ()):
            counts[(tenant, day, link["monitor_id"], label)] += 1
    ordered = sorted(counts.items(), key=lambda item: (str(item[0][0][0]), item[0][0][1], item[0][1],
                                                       str(item[0][2]), item[0][3]))
    return [
        dict(workspace_id=workspace_id, livemode=livemode, day=day, monitor_id=monitor_id, sentiment_label=label,
             signals=count)
        for ((workspace_id, livemode), day, monitor_id, label), count in ordered
    ]


def add_ingest(scope, rows: list[dict], links: dict) -> int:
    """Adds the new signals to the daily counts, in the caller's transaction; returns
    the rows written."""
    return claims.insert_adding(scope.session, ListeningDaily, day_rows(rows, links), unique=_KEY, adding=("signals",))
