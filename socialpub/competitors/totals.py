"""A competitor's running totals (`CompetitorTotals`): what a range of days reads as
the difference of two rows.

Writing (`add`, in the transaction that changes posts, the competitor's row locked
(by socialpub.competitors.ingest, before any post is written) so its writers take turns): each day's differences are added to the row of that
day (made from the latest row before it when there is none) and to every later row,
so each row holds the totals of every post posted on its day or before. Posts are
mostly recent, so a change touches a row or two; a change to an old post touches the
rows from its day on.

Reading (`between`): for each competitor, the latest row on or before the range's
last day less the latest row before its first day, two rows per competitor in one
statement whatever the range.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy import bindparam, func, select, tuple_, union_all, update

from persistence.competitors import Competitor, CompetitorTotals
from socialpub import claims

SUMS = ("posts", "engagements", "engagements_squared", "rate_sum", "rated_posts")
COUNTS = ("slots", "hashtags")


@dataclass
class Delta:
    """The differences of one day: the sums, and {name: [posts, engagements]} of its
    posting slots ("weekday-hour") and hashtags."""

    sums: list = field(default_factory=lambda: [0, 0, 0.0, 0.0, 0])
    slots: dict = field(default_factory=dict)
    hashtags: dict = field(default_factory=dict)

    def count(self, kind: str, name: str, posts: int, engagements: int) -> None:
        value = getattr(self, kind).setdefault(name, [0, 0])
        value[0] += posts
        value[1] += engagements

    def empty(self) -> bool:
        return not any(self.sums) and not self.slots and not self.hashtags


def slot_of(moment: dt.datetime) -> str:
    return f"{moment.weekday()}-{moment.hour}"


def _merged(stored: dict, deltas: dict) -> dict:
    merged = {name: list(value) for name, value in (stored or {}).items()}
    for name, (posts, engagements) in deltas.items():
        value = merged.setdefault(name, [0, 0])
        value[0] += posts
        value[1] += int(engagements)
        if value == [0, 0]:
            del merged[name]
    return merged


def _zero(competitor_id, day) -> dict:
    return dict(competitor_id=competitor_id, day=day, posts=0, engagements=0, engagements_squared=0.0, rate_sum=0.0,
                rated_posts=0, slots={}, hashtags={})


def _as_dict(row) -> dict:
    return {name: getattr(row, name) for name in ("competitor_id", "day", *SUMS, *COUNTS)}


def add(session, competitor_id, deltas: dict[dt.date, Delta]) -> None:
    """Adds each day's `deltas` to the competitor's running totals, in the caller's
    transaction."""
    deltas = {day: delta for day, delta in deltas.items() if not delta.empty()}
    if not deltas:
        return
    session.execute(claims.lock_rows(session, select(Competitor.id).where(Competitor.id == competitor_id)))
    first = min(deltas)
    base = session.execute(
        select(CompetitorTotals).where(CompetitorTotals.competitor_id == competitor_id, CompetitorTotals.day < first)
        .order_by(CompetitorTotals.day.desc()).limit(1)
    ).scalar_one_or_none()
    later = {row.day: _as_dict(row) for row in session.execute(
        select(CompetitorTotals).where(CompetitorTotals.competitor_id == competitor_id, CompetitorTotals.day >= first)
        .execution_options(populate_existing=True)
    ).scalars()}
    existing = set(later)
    previous = _as_dict(base) if base is not None else _zero(competitor_id, first)
    for day in sorted(set(later) | set(deltas)):
        if day not in later:
            later[day] = {**previous, "day": day, "slots": dict(previous["slots"]), "hashtags": dict(previous["hashtags"])}
        previous = later[day]
    for day, delta in sorted(deltas.items()):
        for row_day, row in later.items():
            if row_day < day:
                continue
            for index, name in enumerate(SUMS):
                row[name] += delta.sums[index]
            row["slots"] = _merged(row["slots"], delta.slots)
            row["hashtags"] = _merged(row["hashtags"], delta.hashtags)
    new = [row for day, row in later.items() if day not in existing]
    if new:
        session.execute(CompetitorTotals.__table__.insert(), new)
    changed = [dict(row, key_competitor=row["competitor_id"], key_day=row["day"]) for day, row in later.items()
               if day in existing and day >= first]
    if changed:
        table = CompetitorTotals.__table__
        session.execute(
            update(table).where(table.c.competitor_id == bindparam("key_competitor"), table.c.day == bindparam("key_day"))
            .values(**{name: bindparam(name) for name in (*SUMS, *COUNTS)}),
            [{key: value for key, value in row.items() if key not in ("competitor_id", "day")} for row in changed],
        )


@dataclass(frozen=True)
class Totals:
    posts: int = 0
    engagements: int = 0
    engagements_squared: float = 0.0
    rate_sum: float = 0.0
    rated_posts: int = 0
    slots: dict = field(default_factory=dict)
    hashtags: dict = field(default_factory=dict)


def _minus(end, start) -> Totals:
    if end is None:
        return Totals()
    sums = {name: getattr(end, name) - (getattr(start, name) if start is not None else 0) for name in SUMS}
    counts = {}
    for kind in COUNTS:
        after = getattr(end, kind) or {}
        before = (getattr(start, kind) or {}) if start is not None else {}
        if not before:
            counts[kind] = after
            continue
        kept = {}
        for name, (posts, engagements) in after.items():
            earlier = before.get(name)
            kept[name] = (posts - earlier[0], engagements - earlier[1]) if earlier else (posts, engagements)
        counts[kind] = kept
    return Totals(**sums, **counts)


def between(session, competitor_ids: list, first: dt.date, last: dt.date) -> dict:
    """Each competitor's totals of the posts posted in [first, last], by id."""
    if not competitor_ids:
        return {}
    table = CompetitorTotals
    ends = select(table.competitor_id, func.max(table.day)).where(
        table.competitor_id.in_(competitor_ids), table.day <= last).group_by(table.competitor_id)
    starts = select(table.competitor_id, func.max(table.day)).where(
        table.competitor_id.in_(competitor_ids), table.day < first).group_by(table.competitor_id)
    rows = session.execute(
        select(table.competitor_id, table.day, *(getattr(table, name) for name in (*SUMS, *COUNTS)))
        .where(tuple_(table.competitor_id, table.day).in_(select(union_all(ends, starts).subquery())))
    ).all()
    by_competitor: dict = {}
    for row in rows:
        by_competitor.setdefault(row.competitor_id, []).append(row)
    found = {}
    for competitor_id in competitor_ids:
        kept = sorted(by_competitor.get(competitor_id, []), key=lambda row: row.day)
        end = kept[-1] if kept and kept[-1].day <= last else None
        start = kept[0] if kept and kept[0].day < first else None
        found[competitor_id] = _minus(end, start)
    return found
