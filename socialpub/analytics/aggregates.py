"""What the analytics reports are computed from (service.py): the sums of the posts
published in windows of time, from the daily rollups (rollups.py) and, for the partial
days at a window's ends, from the targets themselves; and the tracked accounts'
audience over time, from their daily follower snapshots.

Post metrics are lifetime counts of the posts published in a window; followers are an
audience at a moment, follower growth the difference between two moments.
"""
from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from dataclasses import dataclass

from sqlalchemy import and_, case, distinct, func, or_, select, tuple_

from persistence.analytics import DailyRollup, FollowerSnapshot, TrackedAccount, TrackedPost
from socialpub.analytics import rollups
from socialpub.tenancy import TenantScope

DAY = dt.timedelta(days=1)
TOTAL_KEYS = (
    "posts", "impressions", "reach", "engagements", "likes", "comments", "shares", "clicks", "engagement_rate",
    "followers", "follower_growth",
)


# --- windows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """A report's period, from `since` to `until`; `previous`, the period before it."""

    period: str
    since: dt.datetime
    until: dt.datetime

    @property
    def previous(self) -> "Window":
        return Window(self.period, self.since - (self.until - self.since), self.since)


def measured_criteria(scope: TenantScope, *criteria):
    """The scope's targets measured at least once, and `criteria`."""
    return [*scope.criteria(TrackedPost), TrackedPost.captured_at.is_not(None), *criteria]


def published_in(since: dt.datetime, until: dt.datetime) -> list:
    return [TrackedPost.published_at >= since, TrackedPost.published_at < until]


# --- post totals ----------------------------------------------------------------------
# A group's sums are in the order of rollups.SUM_NAMES.

NO_SUMS = (0,) * len(rollups.SUM_NAMES)


def add_sums(*groups: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sum(values) for values in zip(NO_SUMS, *groups))


def post_totals(sums: tuple[int, ...]) -> dict:
    values = dict(zip(rollups.SUM_NAMES, sums))
    rated, denominator = values.pop("rated_engagements"), values.pop("rate_denominator")
    return dict(values, engagement_rate=round(rated / denominator, 6) if denominator else None)


def start_of_day(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


def edges_of(window: "Window") -> list[tuple[dt.datetime, dt.datetime]]:
    """The partial days at a window's ends, as time ranges."""
    first, last = window.since.date(), window.until.date()
    edges = [(window.since, min(start_of_day(first) + DAY, window.until))]
    if last != first:
        edges.append((start_of_day(last), window.until))
    return [(since, until) for since, until in edges if since < until]


class PostGroups:
    """The sums of the posts published in one or more windows, by (day, platform):
    whole days from the daily rollups, the partial days at the windows' ends summed
    from the targets themselves (one read for all of them). Only the first window is
    broken down by platform."""

    def __init__(self, scope: TenantScope, *windows: "Window"):
        first = min(window.since for window in windows).date()
        last = max(window.until for window in windows).date()
        main = windows[0]
        any_platform = or_(
            DailyRollup.platform == rollups.ALL_PLATFORMS,
            and_(DailyRollup.day >= main.since.date(), DailyRollup.day <= main.until.date()),
        )
        self.rollup = {
            (day, platform): tuple(int(value) for value in sums)
            for day, platform, *sums in scope.session.execute(
                select(DailyRollup.day, DailyRollup.platform, *(getattr(DailyRollup, n) for n in rollups.SUM_NAMES))
                .where(*scope.criteria(DailyRollup), DailyRollup.day >= first, DailyRollup.day <= last, any_platform)
            ).all()
        }
        self.edges = sorted({edge for window in windows for edge in edges_of(window)})
        self.edge_sums: dict[tuple[int, str], tuple[int, ...]] = {}
        if not self.edges:
            return
        edge = case(
            *((and_(*published_in(since, until)), index) for index, (since, until) in enumerate(self.edges)),
            else_=-1,
        )
        measured = measured_criteria(scope, or_(*(and_(*published_in(*e)) for e in self.edges)))
        sums = (func.count(distinct(TrackedPost.post_id)), *rollups.SUMMED)
        for index, platform, *values in scope.session.execute(
            select(edge, TrackedPost.platform, *sums).where(*measured).group_by(edge, TrackedPost.platform)
        ).all():
            self.edge_sums[(index, platform)] = tuple(int(value) for value in values)
        for index, *values in scope.session.execute(select(edge, *sums).where(*measured).group_by(edge)).all():
            self.edge_sums[(index, rollups.ALL_PLATFORMS)] = tuple(int(value) for value in values)

    def of(self, window: "Window") -> dict[tuple[dt.date, str], tuple[int, ...]]:
        first, last = window.since.date(), window.until.date()
        groups = {key: sums for key, sums in self.rollup.items() if first < key[0] < last}
        for since, until in edges_of(window):
            index = self.edges.index((since, until))
            for (of_edge, platform), sums in self.edge_sums.items():
                if of_edge == index:
                    groups[(since.date(), platform)] = sums
        return groups


def totals_of(groups: dict, platform: str = rollups.ALL_PLATFORMS) -> dict:
    return post_totals(add_sums(*(sums for (_, of), sums in groups.items() if of == platform)))


# --- followers ------------------------------------------------------------------------


class Audience:
    """The followers of the scope's tracked accounts over time, from their daily
    snapshots and latest readings."""

    def __init__(self, scope: TenantScope, since: dt.datetime, *, also_at: tuple[dt.datetime, ...] = ()):
        """Reads the snapshots from `since` on, those just before each moment of
        `also_at` (followers are measured daily: the last two days hold the one that
        stands for that moment), and each account's first."""
        self.platform_of: dict = {}
        self.latest: dict = {}
        for account_id, platform, followers in scope.session.execute(
            select(TrackedAccount.account_id, TrackedAccount.platform, TrackedAccount.followers)
            .where(*scope.criteria(TrackedAccount))
        ).all():
            self.platform_of[account_id] = platform
            if followers is not None:
                self.latest[account_id] = followers
        self.series: dict = {}
        for account_id, platform, bucket_start, followers in scope.session.execute(
            select(FollowerSnapshot.account_id, FollowerSnapshot.platform, FollowerSnapshot.bucket_start,
                   FollowerSnapshot.followers)
            .where(*scope.criteria(FollowerSnapshot), or_(
                FollowerSnapshot.bucket_start >= since - DAY,
                *(and_(FollowerSnapshot.bucket_start >= moment - 2 * DAY, FollowerSnapshot.bucket_start <= moment)
                  for moment in also_at),
                # Each account's first reading: growth of an account first measured
                # within a window counts from there.
                tuple_(FollowerSnapshot.account_id, FollowerSnapshot.bucket_start).in_(
                    select(FollowerSnapshot.account_id, func.min(FollowerSnapshot.bucket_start))
                    .where(*scope.criteria(FollowerSnapshot)).group_by(FollowerSnapshot.account_id)
                ),
            ))
            .order_by(FollowerSnapshot.account_id, FollowerSnapshot.bucket_start)
        ).all():
            self.platform_of.setdefault(account_id, platform)
            times, counts = self.series.setdefault(account_id, ([], []))
            times.append(bucket_start)
            counts.append(followers)

    def accounts(self, platform: str | None = None) -> list:
        return [a for a, p in self.platform_of.items() if platform is None or p == platform]

    def at(self, account_id, moment: dt.datetime, *, now: dt.datetime) -> int | None:
        """Followers at a moment: the latest reading for now, else the day's snapshot."""
        if moment >= now and account_id in self.latest:
            return self.latest[account_id]
        times, counts = self.series.get(account_id, ([], []))
        index = bisect_right(times, moment)
        return counts[index - 1] if index else None

    def first_within(self, account_id, since: dt.datetime, until: dt.datetime) -> int | None:
        times, counts = self.series.get(account_id, ([], []))
        for moment, count in zip(times, counts):
            if since <= moment < until:
                return count
        return None

    def total_at(self, moment: dt.datetime, *, now: dt.datetime, platform: str | None = None) -> int:
        return sum(self.at(a, moment, now=now) or 0 for a in self.accounts(platform))

    def growth(self, since: dt.datetime, until: dt.datetime, *, now: dt.datetime, platform: str | None = None) -> int:
        """Net new followers between two moments. An account first measured within them
        grows from its first reading."""
        total = 0
        for account_id in self.accounts(platform):
            end = self.at(account_id, until, now=now)
            start = self.at(account_id, since, now=now)
            if start is None:
                start = self.first_within(account_id, since, until)
            if end is not None and start is not None:
                total += end - start
        return total


def with_audience(totals: dict, audience: Audience, window: Window, *, now, platform=None) -> dict:
    return dict(
        totals,
        followers=audience.total_at(window.until, now=now, platform=platform),
        follower_growth=audience.growth(window.since, window.until, now=now, platform=platform),
    )


def change_of(current: dict, previous: dict) -> dict:
    """The change of each total in percent of the previous one; None where that was 0."""
    change = {}
    for key in TOTAL_KEYS:
        before, after = previous.get(key), current.get(key)
        if not before or after is None:
            change[key] = None
        else:
            change[key] = round((after - before) / abs(before) * 100, 2)
    return change


def days_of(window: Window) -> list[dt.date]:
    first, last = window.since.date(), window.until.date()
    return [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
