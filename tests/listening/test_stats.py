"""The daily counts kept by each ingest, and the stats read from them: a period
ending now and the one before, exact at the partial days of their ends, every
signal and each monitor's, the change in percent, and nothing of another workspace
or mode."""
from __future__ import annotations

import datetime as dt
import random

import pytest
from sqlalchemy import select

from persistence.listening import ALL_SIGNALS, ListeningDaily, ListeningSignal, ListeningSignalMonitor
from socialpub import clock
from socialpub.listening import signals
from socialpub.tenancy import TenantScope
from tests.listening.factories import make_monitor, make_signal, signal_fields
from tests.support.factories import make_workspace

URL = "/api/v1/listening/stats"
NOW = dt.datetime(2026, 11, 27, 15, 30, tzinfo=dt.timezone.utc)
POSITIVE, NEGATIVE, NEUTRAL = "I love Acme, it is great!", "Acme is awful, I hate it.", "Acme opens on Monday."


@pytest.fixture
def now():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


def daily(session, workspace) -> dict:
    session.expire_all()
    return {
        (row.day, row.monitor_id, row.sentiment_label): row.signals
        for row in session.execute(select(ListeningDaily).where(ListeningDaily.workspace_id == workspace.id)).scalars()
    }


def stats(client, key, **params) -> dict:
    response = client.get(URL, headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


class TestDailyCounts:
    def test_each_ingest_adds_its_new_signals_by_day_monitor_and_sentiment(self, session, workspace):
        acme = make_monitor(session, workspace, keywords=["acme"])
        phones = make_monitor(session, workspace, name="Phones", keywords=["phone"])
        day = dt.datetime(2026, 11, 20, 23, 59, tzinfo=dt.timezone.utc)
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        result = signals.ingest(scope, [
            signal_fields(content="I love my Acme phone!", posted_at=day),
            signal_fields(content="Acme is awful.", posted_at=day),
            signal_fields(content="Weather today.", posted_at=day + dt.timedelta(minutes=2)),
            signal_fields(external_id="bad", content=" ", posted_at=day),
        ])
        session.commit()
        assert result.created == 3
        first, second = day.date(), day.date() + dt.timedelta(days=1)
        assert daily(session, workspace) == {
            (first, ALL_SIGNALS, "positive"): 1, (first, ALL_SIGNALS, "negative"): 1,
            (second, ALL_SIGNALS, "neutral"): 1,
            (first, acme.id, "positive"): 1, (first, acme.id, "negative"): 1, (first, phones.id, "positive"): 1,
        }
        # A second ingest adds to the same rows; its duplicates count nothing.
        signals.ingest(scope, [signal_fields(content="Acme is great", posted_at=day),
                               signal_fields(external_id=result.signals[0].external_id, content="again", posted_at=day)])
        session.commit()
        counts = daily(session, workspace)
        assert counts[(first, ALL_SIGNALS, "positive")] == 2 and counts[(first, acme.id, "positive")] == 2

    def test_match_what_the_signals_say(self, session, workspace):
        monitor = make_monitor(session, workspace, keywords=["acme", "globex"])
        rng = random.Random(5)
        texts = [POSITIVE, NEGATIVE, NEUTRAL, "Globex rocks, love it", "Nothing to see"]
        start = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        for batch in range(5):
            signals.ingest(scope, [
                signal_fields(content=rng.choice(texts), posted_at=start + dt.timedelta(minutes=rng.randint(0, 20_000)))
                for _ in range(40)
            ])
        session.commit()
        expected: dict = {}
        for signal in session.execute(select(ListeningSignal).where(ListeningSignal.workspace_id == workspace.id)).scalars():
            key = (signal.posted_at.date(), ALL_SIGNALS, signal.sentiment_label)
            expected[key] = expected.get(key, 0) + 1
        for link in session.execute(select(ListeningSignalMonitor).where(
                ListeningSignalMonitor.monitor_id == monitor.id)).scalars():
            key = (link.posted_at.date(), monitor.id, link.sentiment_label)
            expected[key] = expected.get(key, 0) + 1
        assert daily(session, workspace) == expected


class TestStats:
    def test_counts_the_period_and_the_one_before_exactly_at_their_edges(self, client, session, workspace, key, now):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        quiet = make_monitor(session, workspace, name="Quiet", keywords=["zzz"], enabled=False)
        since = NOW - dt.timedelta(days=7)
        moments = [
            (NOW - dt.timedelta(minutes=1), POSITIVE),          # today, before now
            (NOW + dt.timedelta(minutes=1), POSITIVE),          # today, after now: not yet
            (since, NEGATIVE),                                  # the period's first instant
            (since - dt.timedelta(microseconds=1), NEGATIVE),   # the previous period's last
            (since.replace(hour=0, minute=0), NEUTRAL),         # the boundary day, previous period
            (since + dt.timedelta(hours=3), NEUTRAL),           # the boundary day, this period
            (NOW - dt.timedelta(days=3), POSITIVE),             # a whole day of this period
            (NOW - dt.timedelta(days=10), POSITIVE),            # a whole day of the previous one
            (NOW - dt.timedelta(days=14), NEGATIVE),            # the previous period's first instant
            (NOW - dt.timedelta(days=14, seconds=1), NEGATIVE),  # before both
            (NOW - dt.timedelta(days=3), "No brand here, love it"),  # matches no monitor
        ]
        for posted_at, content in moments:
            make_signal(session, workspace, content=content, posted_at=posted_at)
        make_signal(session, workspace, livemode=True, content=POSITIVE, posted_at=NOW - dt.timedelta(hours=1))
        make_signal(session, make_workspace(session, name="Other"), content=POSITIVE, posted_at=NOW - dt.timedelta(hours=1))

        data = stats(client, key, period="7d")
        assert data["period"] == "7d"
        assert data["from"] == "2026-11-20T15:30:00.000Z" and data["to"] == "2026-11-27T15:30:00.000Z"
        assert data["totals"] == {"signals": 5, "positive": 3, "negative": 1, "neutral": 1, "netSentiment": 0.4}
        assert data["previous"] == {"signals": 4, "positive": 1, "negative": 2, "neutral": 1, "netSentiment": -0.25}
        assert data["change"] == {"signals": 25.0, "positive": 200.0, "negative": -50.0, "neutral": 0.0}
        [acme, silent] = data["monitors"]
        assert acme["monitorId"] == str(monitor.id) and acme["name"] == "Acme brand" and acme["enabled"] is True
        assert acme["totals"] == {"signals": 4, "positive": 2, "negative": 1, "neutral": 1, "netSentiment": 0.25}
        assert acme["previous"]["signals"] == 4 and acme["change"]["signals"] == 0.0
        assert silent["monitorId"] == str(quiet.id) and silent["enabled"] is False
        assert silent["totals"]["signals"] == 0 and silent["totals"]["netSentiment"] is None
        assert silent["change"] == {"signals": None, "positive": None, "negative": None, "neutral": None}

    def test_match_a_count_of_the_signals_for_every_period(self, client, session, workspace, key, now):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        rng = random.Random(11)
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        texts = [POSITIVE, NEGATIVE, NEUTRAL, "Nothing to see, love it"]
        fields = [signal_fields(content=rng.choice(texts),
                                posted_at=NOW - dt.timedelta(minutes=rng.randint(-600, 200 * 24 * 60)))
                  for _ in range(600)]
        for start in range(0, len(fields), 100):
            signals.ingest(scope, fields[start:start + 100])
        session.commit()
        stored = list(session.execute(select(ListeningSignal).where(ListeningSignal.workspace_id == workspace.id)).scalars())
        signals.attach_monitor_ids(scope, stored)
        for period, days in (("7d", 7), ("30d", 30), ("90d", 90)):
            length = dt.timedelta(days=days)

            def count(since, until, label=None, of_monitor=False):
                return sum(1 for s in stored if since <= s.posted_at < until and (label is None or s.sentiment_label == label)
                           and (not of_monitor or monitor.id in s.monitor_ids))

            data = stats(client, key, period=period)
            for name, since, until in (("totals", NOW - length, NOW), ("previous", NOW - 2 * length, NOW - length)):
                assert data[name]["signals"] == count(since, until), (period, name)
                for label in ("positive", "negative", "neutral"):
                    assert data[name][label] == count(since, until, label), (period, name, label)
                assert data["monitors"][0][name]["signals"] == count(since, until, of_monitor=True), (period, name)
                assert data["monitors"][0][name]["negative"] == count(since, until, "negative", True), (period, name)

    def test_the_default_period_is_30_days(self, client, key, now):
        data = stats(client, key)
        assert data["period"] == "30d" and data["from"] == "2026-10-28T15:30:00.000Z"
        assert data["totals"]["signals"] == 0 and data["monitors"] == []

    def test_an_unknown_period_is_422(self, client, key):
        response = client.get(URL, headers=key.headers, params={"period": "14d"})
        assert response.status_code == 422 and response.json()["error"]["code"] == "validation_error"

    def test_monitors_with_the_most_signals_come_first(self, client, session, workspace, key, now):
        first = make_monitor(session, workspace, name="First", keywords=["globex"])
        second = make_monitor(session, workspace, name="Second", keywords=["acme"])
        for _ in range(2):
            make_signal(session, workspace, content="acme", posted_at=NOW - dt.timedelta(hours=2))
        data = stats(client, key, period="7d")
        assert [m["monitorId"] for m in data["monitors"]] == [str(second.id), str(first.id)]


def test_the_migration_counts_the_signals_already_stored(tmp_path):
    """Signals stored before the daily counts existed are counted when they are made."""
    import uuid

    from sqlalchemy import create_engine, insert, text
    from sqlalchemy.orm import Session

    from persistence.listening import ListeningSignal as Signal
    from persistence.listening import ListeningSignalMonitor as Link
    from persistence.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'before.db'}"
    upgrade(url, revision="0019")
    engine = create_engine(url)
    with Session(engine) as session:
        workspace = make_workspace(session)
        session.commit()
        monitor_id = uuid.uuid4()
        session.execute(text(
            "INSERT INTO listening_monitors (id, workspace_id, livemode, name, keywords, required_keywords, "
            "excluded_keywords, platforms, languages, enabled, created_at, updated_at) VALUES (:id, :ws, 0, 'm', "
            "'[]', '[]', '[]', '[]', '[]', 1, '2026-11-01 00:00:00', '2026-11-01 00:00:00')"
        ), {"id": monitor_id.hex, "ws": workspace.id.hex})
        when = dt.datetime(2026, 11, 20, 23, 30, tzinfo=dt.timezone.utc)
        rows = [dict(id=uuid.uuid4(), workspace_id=workspace.id, livemode=False, platform="mastodon",
                     external_id=f"x{n}", content="c", posted_at=when + dt.timedelta(hours=n), sentiment_score=0.5,
                     sentiment_label="positive" if n else "negative", created_at=when, updated_at=when)
                for n in range(3)]
        session.execute(insert(Signal.__table__), rows)
        session.execute(insert(Link.__table__), [
            dict(signal_id=row["id"], monitor_id=monitor_id, workspace_id=workspace.id, livemode=False,
                 posted_at=row["posted_at"], sentiment_label=row["sentiment_label"], platform="mastodon")
            for row in rows[:2]
        ])
        session.commit()
    upgrade(url)
    with Session(engine) as session:
        found = {(row.day, row.monitor_id, row.sentiment_label): row.signals
                 for row in session.execute(select(ListeningDaily)).scalars()}
    engine.dispose()
    first, second = when.date(), when.date() + dt.timedelta(days=1)
    assert found == {
        (first, ALL_SIGNALS, "negative"): 1, (second, ALL_SIGNALS, "positive"): 2,
        (first, monitor_id, "negative"): 1, (second, monitor_id, "positive"): 1,
    }
