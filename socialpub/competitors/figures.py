"""What the insights, benchmarks and comparisons share: the range of UTC days they
cover, the competitors chosen, and each competitor's figures over the range read
from its daily rows (socialpub.competitors.ingest keeps them), a few rows per
competitor and day however many posts it has.

Metrics (the same for competitors and, from analytics, for the workspace):
- postsPerDay: posts over the range's days;
- engagementsPerPost: engagements (likes, replies, reposts) over posts (null without posts);
- engagementRate: the mean of the posts' engagement rates, each its engagements over
  the followers when it was read (a fraction; null when none is known);
- followerGrowth: the last followers read in the range less the first (null with
  fewer than one reading);
- followers: the last followers read in the range (null without a reading).
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from sqlalchemy import and_, func, select, tuple_, union_all

from persistence.competitors import Competitor, CompetitorDaily
from socialpub import clock
from socialpub.competitors import totals
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope

DEFAULT_DAYS = 30
MAX_DAYS = 366
METRICS = ("postsPerDay", "engagementsPerPost", "engagementRate", "followerGrowth", "followers")
DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Range:
    first: dt.date
    last: dt.date

    @property
    def since(self) -> dt.datetime:
        return dt.datetime.combine(self.first, dt.time(), tzinfo=dt.timezone.utc)

    @property
    def until(self) -> dt.datetime:
        return dt.datetime.combine(self.last, dt.time(), tzinfo=dt.timezone.utc) + DAY

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def each_day(self) -> list[dt.date]:
        return [self.first + dt.timedelta(days=offset) for offset in range(self.days)]


def _date(value, name: str) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 else _refuse(name)
    except ValueError:
        return _refuse(name)


def _refuse(name: str):
    raise ApiError.field_invalid(name, f"{name} must be a date (YYYY-MM-DD).")


def range_of(since=None, until=None) -> Range:
    """[from, to] as UTC days, both included: `to` defaults to today, `from` to
    DEFAULT_DAYS days ending at `to`; `from` after `to`, or more than MAX_DAYS days, is 422."""
    last = _date(until, "to") or clock.now().astimezone(dt.timezone.utc).date()
    first = _date(since, "from") or last - dt.timedelta(days=DEFAULT_DAYS - 1)
    if first > last:
        raise ApiError.field_invalid("from", "from must not be after to.")
    if (last - first).days + 1 > MAX_DAYS:
        raise ApiError.field_invalid("from", f"A range covers at most {MAX_DAYS} days.")
    return Range(first, last)


def chosen(scope: TenantScope, competitor_ids=None) -> list[Competitor]:
    """The scope's competitors named by `competitor_ids` (in that order; every one
    when None), 422 naming an entry that is not one of them."""
    found = {c.id: c for c in scope.session.execute(scope.select(Competitor)).scalars()}
    if competitor_ids is None:
        return sorted(found.values(), key=lambda c: (c.name, str(c.id)))
    by_text = {str(key): value for key, value in found.items()}
    picked, seen = [], set()
    for index, value in enumerate(competitor_ids):
        competitor = by_text.get(str(value).lower())
        if competitor is None:
            raise ApiError.field_invalid(f"competitorIds[{index}]", f"{value} is not a competitor of this workspace and mode.")
        if competitor.id not in seen:
            seen.add(competitor.id)
            picked.append(competitor)
    return picked


_FIGURES = (CompetitorDaily.competitor_id, CompetitorDaily.day, CompetitorDaily.posts, CompetitorDaily.engagements,
            CompetitorDaily.engagements_squared, CompetitorDaily.rate_sum, CompetitorDaily.rated_posts,
            CompetitorDaily.followers)


def daily_rows(session, competitors: list[Competitor], span: Range) -> dict:
    """Each competitor's daily rows in the range (read as rows of their columns), by
    competitor id, oldest first."""
    rows: dict = {c.id: [] for c in competitors}
    if not competitors:
        return rows
    for row in session.execute(
        select(*_FIGURES).where(CompetitorDaily.competitor_id.in_(list(rows)),
                               CompetitorDaily.day >= span.first, CompetitorDaily.day <= span.last)
        .order_by(CompetitorDaily.competitor_id, CompetitorDaily.day)
    ):
        rows[row.competitor_id].append(row)
    return rows


@dataclass(frozen=True)
class Summary:
    posts: int
    engagements: int
    engagements_squared: float
    rate_sum: float
    rated_posts: int
    first_followers: int | None
    last_followers: int | None

    def metric(self, name: str, days: int):
        if name == "postsPerDay":
            return round(self.posts / days, 4)
        if name == "engagementsPerPost":
            return round(self.engagements / self.posts, 4) if self.posts else None
        if name == "engagementRate":
            return round(self.rate_sum / self.rated_posts, 6) if self.rated_posts else None
        if name == "followerGrowth":
            return None if self.last_followers is None else self.last_followers - self.first_followers
        if name == "followers":
            return self.last_followers
        raise ValueError(name)

    @property
    def breakout_threshold(self) -> float | None:
        """mean + 2σ of the posts' engagements (null under two posts)."""
        if self.posts < 2:
            return None
        mean = self.engagements / self.posts
        variance = max(0.0, self.engagements_squared / self.posts - mean * mean)
        return mean + 2 * math.sqrt(variance)


def summarize(rows) -> Summary:
    readings = [row.followers for row in rows if row.followers is not None]
    return Summary(
        posts=sum(row.posts for row in rows), engagements=sum(row.engagements for row in rows),
        engagements_squared=sum(row.engagements_squared for row in rows), rate_sum=sum(row.rate_sum for row in rows),
        rated_posts=sum(row.rated_posts for row in rows),
        first_followers=readings[0] if readings else None, last_followers=readings[-1] if readings else None,
    )


def followers_between(session, competitor_ids: list, span: Range) -> dict:
    """Each competitor's first and last followers read in the range, by id (absent
    without a reading): the two rows read through the days' index."""
    if not competitor_ids:
        return {}
    read = and_(CompetitorDaily.competitor_id.in_(competitor_ids), CompetitorDaily.day >= span.first,
                CompetitorDaily.day <= span.last, CompetitorDaily.followers.is_not(None))
    firsts = select(CompetitorDaily.competitor_id, func.min(CompetitorDaily.day)).where(read).group_by(
        CompetitorDaily.competitor_id)
    lasts = select(CompetitorDaily.competitor_id, func.max(CompetitorDaily.day)).where(read).group_by(
        CompetitorDaily.competitor_id)
    found: dict = {}
    for competitor_id, day, followers in session.execute(
        select(CompetitorDaily.competitor_id, CompetitorDaily.day, CompetitorDaily.followers)
        .where(tuple_(CompetitorDaily.competitor_id, CompetitorDaily.day).in_(select(union_all(firsts, lasts).subquery())))
        .order_by(CompetitorDaily.competitor_id, CompetitorDaily.day)
    ):
        first, _ = found.get(competitor_id, (followers, None))
        found[competitor_id] = (first, followers)
    return found


def summaries(session, competitors: list[Competitor], span: Range) -> dict:
    """Each competitor's Summary over the range and its totals (with its posting slots
    and hashtags), by id: two rows of running totals and two of followers per
    competitor, whatever the range."""
    ids = [c.id for c in competitors]
    sums = totals.between(session, ids, span.first, span.last)
    readings = followers_between(session, ids, span)
    found = {}
    for competitor_id in ids:
        kept = sums[competitor_id]
        first, last = readings.get(competitor_id, (None, None))
        found[competitor_id] = (Summary(
            posts=kept.posts, engagements=kept.engagements, engagements_squared=kept.engagements_squared,
            rate_sum=kept.rate_sum, rated_posts=kept.rated_posts, first_followers=first, last_followers=last,
        ), kept)
    return found


def checked_metrics(metrics) -> list[str]:
    if not metrics:
        return list(METRICS)
    picked = []
    for index, name in enumerate(metrics):
        if name not in METRICS:
            raise ApiError.field_invalid(f"metrics[{index}]", f"metrics are among {', '.join(METRICS)}.")
        if name not in picked:
            picked.append(name)
    return picked
