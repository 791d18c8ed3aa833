"""The listening dashboard's stats: over a period ending now (7, 30 or 90 days, as
the analytics overview), the signals of the workspace's mode and of each of its
monitors, split by sentiment, beside the same counts for the period before it and
the change in percent.

A period's whole UTC days are read from the daily counts (`ListeningDaily`, kept by
each ingest: socialpub.listening.rollups), a few rows a day; the partial days at its
ends (the day it starts on, and today up to now) are counted from the signals
themselves, through the indexes by time (the signals' by workspace and time, the
monitor links' by monitor and time), with one statement each for both periods. So
the cost of the stats grows with the monitors and the signals of about three days,
not with the signals stored.
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import and_, case, func, or_, select

from persistence.listening import ALL_SIGNALS, ListeningDaily, ListeningMonitor, SentimentLabel
from persistence.listening import ListeningSignal as Signal
from persistence.listening import ListeningSignalMonitor as SignalMonitor
from socialpub import clock
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope, scoped

PERIODS = {"7d": 7, "30d": 30, "90d": 90}
DEFAULT_PERIOD = "30d"
DAY = dt.timedelta(days=1)
CURRENT, PREVIOUS = 0, 1
COUNTED = ("signals", "positive", "negative", "neutral")


@dataclass
class Counts:
    positive: int = 0
    negative: int = 0
    neutral: int = 0

    def add(self, label: str, count: int) -> None:
        if label in (SentimentLabel.POSITIVE, SentimentLabel.NEGATIVE, SentimentLabel.NEUTRAL):
            setattr(self, label, getattr(self, label) + int(count))

    @property
    def signals(self) -> int:
        return self.positive + self.negative + self.neutral

    def as_dict(self) -> dict:
        signals = self.signals
        return dict(signals=signals, positive=self.positive, negative=self.negative, neutral=self.neutral,
                    net_sentiment=round((self.positive - self.negative) / signals, 4) if signals else None)


def change_of(current: Counts, previous: Counts) -> dict:
    """Each count's change in percent of the previous period's; None where that was 0."""
    now, before = current.as_dict(), previous.as_dict()
    return {name: round((now[name] - before[name]) / before[name] * 100, 2) if before[name] else None
            for name in COUNTED}


@dataclass(frozen=True)
class Period:
    since: dt.datetime
    until: dt.datetime

    @property
    def whole_days(self) -> tuple[dt.date, dt.date]:
        """The first and last UTC day wholly inside (the first after the last when none)."""
        first = self.since.date() if self.since == _midnight(self.since.date()) else self.since.date() + DAY
        return first, self.until.date() - DAY

    @property
    def edges(self) -> list[tuple[dt.datetime, dt.datetime]]:
        """The parts of days at its ends, as time ranges."""
        first, last = self.whole_days
        if first > last:
            return [(self.since, self.until)]
        ranges = [(self.since, _midnight(first)), (_midnight(last) + DAY, self.until)]
        return [(start, end) for start, end in ranges if start < end]


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


def periods_of(period: str | None, *, now: dt.datetime) -> tuple[str, Period, Period]:
    period = period or DEFAULT_PERIOD
    if period not in PERIODS:
        raise ApiError.field_invalid("period", f"period must be one of {', '.join(PERIODS)}.")
    length = dt.timedelta(days=PERIODS[period])
    return period, Period(now - length, now), Period(now - 2 * length, now - length)


@scoped
def get_stats(scope: TenantScope, *, period: str | None = None) -> dict:
    now = clock.now()
    period, current, previous = periods_of(period, now=now)
    monitors = list(scope.session.execute(
        scope.select(ListeningMonitor).order_by(ListeningMonitor.created_at.desc(), ListeningMonitor.id.desc())
    ).scalars())
    counts: dict = defaultdict(lambda: (Counts(), Counts()))
    _add_whole_days(scope, (current, previous), counts)
    _add_edges(scope, (current, previous), [monitor.id for monitor in monitors], counts)

    def figures(key) -> dict:
        now_counts, before = counts[key]
        return dict(totals=now_counts.as_dict(), previous=before.as_dict(), change=change_of(now_counts, before))

    by_monitor = [
        dict(monitor_id=monitor.id, name=monitor.name, enabled=monitor.enabled, **figures(monitor.id))
        for monitor in monitors
    ]
    by_monitor.sort(key=lambda entry: -entry["totals"]["signals"])  # stable: newest first among equals
    return dict(period=period, since=current.since, until=current.until, **figures(ALL_SIGNALS), monitors=by_monitor)


def _add_whole_days(scope: TenantScope, periods: tuple[Period, Period], counts) -> None:
    """The whole days' counts, summed by the database: a row per monitor, sentiment
    and period, however many days."""
    spans = [(index, *period.whole_days) for index, period in enumerate(periods)]
    spans = [(index, first, last) for index, first, last in spans if first <= last]
    if not spans:
        return
    day = ListeningDaily.day
    which = case(*((and_(day >= first, day <= last), index) for index, first, last in spans), else_=-1)
    rows = scope.session.execute(
        select(which, ListeningDaily.monitor_id, ListeningDaily.sentiment_label, func.sum(ListeningDaily.signals))
        .where(*scope.criteria(ListeningDaily), day >= min(first for _, first, _ in spans),
               day <= max(last for _, _, last in spans))
        .group_by(which, ListeningDaily.monitor_id, ListeningDaily.sentiment_label)
    )
    for index, monitor_id, label, signals in rows:
        if index >= 0:
            counts[monitor_id][index].add(label, signals)


def _edge_of(column, edges: list[tuple[int, dt.datetime, dt.datetime]]):
    """The edge (by its place in `edges`) a time falls in, and the filter keeping those in one."""
    which = case(*((and_(column >= start, column < end), place) for place, (_, start, end) in enumerate(edges)),
                 else_=-1)
    return which, or_(*(and_(column >= start, column < end) for _, start, end in edges))


def _add_edges(scope: TenantScope, periods: tuple[Period, Period], monitor_ids: list, counts) -> None:
    edges = [(index, start, end) for index, period in enumerate(periods) for start, end in period.edges]
    if not edges:
        return
    which, within = _edge_of(Signal.posted_at, edges)
    for place, label, signals in scope.session.execute(
        select(which, Signal.sentiment_label, func.count())
        .where(*scope.criteria(Signal), within).group_by(which, Signal.sentiment_label)
    ):
        if place >= 0:
            counts[ALL_SIGNALS][edges[place][0]].add(label, signals)
    if not monitor_ids:
        return
    which, within = _edge_of(SignalMonitor.posted_at, edges)
    for place, monitor_id, label, signals in scope.session.execute(
        select(which, SignalMonitor.monitor_id, SignalMonitor.sentiment_label, func.count())
        .where(*scope.criteria(SignalMonitor), SignalMonitor.monitor_id.in_(monitor_ids), within)
        .group_by(which, SignalMonitor.monitor_id, SignalMonitor.sentiment_label)
    ):
        if place >= 0:
            counts[monitor_id][edges[place][0]].add(label, signals)


@scoped
def daily_volume(scope: TenantScope, *, period: str | None = None) -> dict:
    """The signals of the scope's workspace and mode posted on each UTC day of a
    period ending today (7, 30 or 90 days), by sentiment: the daily counts each
    ingest keeps (socialpub.listening.rollups), one row a day and sentiment."""
    now = clock.now()
    period, current, _ = periods_of(period, now=now)
    first, last = current.since.date(), now.date()
    days = {first + dt.timedelta(days=offset): Counts() for offset in range((last - first).days + 1)}
    rows = scope.session.execute(
        select(ListeningDaily.day, ListeningDaily.sentiment_label, func.sum(ListeningDaily.signals))
        .where(*scope.criteria(ListeningDaily), ListeningDaily.monitor_id == ALL_SIGNALS,
               ListeningDaily.day >= first, ListeningDaily.day <= last)
        .group_by(ListeningDaily.day, ListeningDaily.sentiment_label)
    )
    for day, label, signals in rows:
        days[day].add(label, signals)
    return dict(period=period, since=current.since, until=now,
                days=[dict(date=day, **counts.as_dict()) for day, counts in days.items()])
