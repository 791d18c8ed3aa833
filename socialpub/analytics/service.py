"""The analytics reports, read through a TenantScope from the latest reading of each
tracked target (persistence.analytics.TrackedPost) and the daily follower snapshots.

Post metrics are lifetime counts of the posts published in a period (a post published
on the 3rd counts all its likes, also those of the 20th, in the period holding the
3rd). Followers are the accounts' audience at a moment; follower growth is the
difference between two moments. Definitions of engagements and engagement rate:
socialpub.analytics.metrics.
"""
from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from dataclasses import dataclass

from sqlalchemy import and_, case, distinct, func, or_, select, tuple_
from sqlalchemy.orm import Session

from persistence.analytics import DailyRollup, FollowerSnapshot, TrackedAccount, TrackedPost
from socialpub import clock
from socialpub.analytics import rollups
from socialpub.analytics.metrics import PostMetrics
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import TenantScope

PERIODS = {"7d": 7, "30d": 30, "90d": 90}
DEFAULT_PERIOD = "30d"
DAY = dt.timedelta(days=1)

# The metrics a list can be sorted and ranked by: contract name -> column.
METRIC_COLUMNS = {
    "impressions": TrackedPost.impressions,
    "reach": TrackedPost.reach,
    "clicks": TrackedPost.clicks,
    "likes": TrackedPost.likes,
    "comments": TrackedPost.comments,
    "shares": TrackedPost.shares,
    "engagements": TrackedPost.engagements,
    "engagementRate": TrackedPost.engagement_rate,
}
SORT_COLUMNS = {"publishedAt": TrackedPost.published_at, **METRIC_COLUMNS}
DEFAULT_SORT = "-publishedAt"
TOTAL_KEYS = (
    "posts", "impressions", "reach", "engagements", "likes", "comments", "shares", "clicks", "engagement_rate",
    "followers", "follower_growth",
)


@dataclass(frozen=True)
class Window:
    period: str
    since: dt.datetime
    until: dt.datetime

    @property
    def previous(self) -> "Window":
        return Window(self.period, self.since - (self.until - self.since), self.since)


def window_of(period: str | None, *, now: dt.datetime | None = None) -> Window:
    period = period or DEFAULT_PERIOD
    if period not in PERIODS:
        raise ApiError.field_invalid("period", f"period must be one of {', '.join(PERIODS)}.")
    now = now or clock.now()
    return Window(period, now - dt.timedelta(days=PERIODS[period]), now)


def _measured(scope: TenantScope, *criteria):
    return [*scope.criteria(TrackedPost), TrackedPost.captured_at.is_not(None), *criteria]


def _published_in(since: dt.datetime, until: dt.datetime) -> list:
    return [TrackedPost.published_at >= since, TrackedPost.published_at < until]


# --- post totals ----------------------------------------------------------------------
# A group's sums are in the order of rollups.SUM_NAMES.

_NO_SUMS = (0,) * len(rollups.SUM_NAMES)


def _add(*groups: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sum(values) for values in zip(_NO_SUMS, *groups))


def _post_totals(sums: tuple[int, ...]) -> dict:
    values = dict(zip(rollups.SUM_NAMES, sums))
    rated, denominator = values.pop("rated_engagements"), values.pop("rate_denominator")
    return dict(values, engagement_rate=round(rated / denominator, 6) if denominator else None)


def _day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


def _edges(window: "Window") -> list[tuple[dt.datetime, dt.datetime]]:
    """The partial days at a window's ends, as time ranges."""
    first, last = window.since.date(), window.until.date()
    edges = [(window.since, min(_day_start(first) + DAY, window.until))]
    if last != first:
        edges.append((_day_start(last), window.until))
    return [(since, until) for since, until in edges if since < until]


class _PostGroups:
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
        self.edges = sorted({edge for window in windows for edge in _edges(window)})
        self.edge_sums: dict[tuple[int, str], tuple[int, ...]] = {}
        if not self.edges:
            return
        edge = case(
            *((and_(*_published_in(since, until)), index) for index, (since, until) in enumerate(self.edges)),
            else_=-1,
        )
        measured = _measured(scope, or_(*(and_(*_published_in(*e)) for e in self.edges)))
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
        for since, until in _edges(window):
            index = self.edges.index((since, until))
            for (of_edge, platform), sums in self.edge_sums.items():
                if of_edge == index:
                    groups[(since.date(), platform)] = sums
        return groups


def _totals(groups: dict, platform: str = rollups.ALL_PLATFORMS) -> dict:
    return _post_totals(_add(*(sums for (_, of), sums in groups.items() if of == platform)))


# --- followers ------------------------------------------------------------------------


class _Audience:
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


def _with_audience(totals: dict, audience: _Audience, window: Window, *, now, platform=None) -> dict:
    return dict(
        totals,
        followers=audience.total_at(window.until, now=now, platform=platform),
        follower_growth=audience.growth(window.since, window.until, now=now, platform=platform),
    )


def _change(current: dict, previous: dict) -> dict:
    """The change of each total in percent of the previous one; None where that was 0."""
    change = {}
    for key in TOTAL_KEYS:
        before, after = previous.get(key), current.get(key)
        if not before or after is None:
            change[key] = None
        else:
            change[key] = round((after - before) / abs(before) * 100, 2)
    return change


def _days(window: Window) -> list[dt.date]:
    first, last = window.since.date(), window.until.date()
    return [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]


# --- reports ----------------------------------------------------------------------------


def overview(*, session: Session, principal: Principal, period: str | None = None) -> dict:
    scope = TenantScope.of(session, principal)
    now = clock.now()
    window = window_of(period, now=now)
    previous = window.previous
    # The previous window needs its two ends only; the current one every day.
    audience = _Audience(scope, window.since, also_at=(previous.since,))
    posts = _PostGroups(scope, window, previous)
    current_groups = posts.of(window)

    totals = _with_audience(_totals(current_groups), audience, window, now=now)
    before = _with_audience(_totals(posts.of(previous)), audience, previous, now=now)
    platforms = sorted(
        {platform for _, platform in current_groups if platform != rollups.ALL_PLATFORMS}
        | {audience.platform_of[account] for account in audience.accounts()}
    )
    by_platform = [
        dict(platform=platform, **_with_audience(_totals(current_groups, platform), audience, window, now=now, platform=platform))
        for platform in platforms
    ]
    daily = []
    for day in _days(window):
        day_start = _day_start(day)
        end_of_day = min(day_start + DAY, now)
        sums = current_groups.get((day, rollups.ALL_PLATFORMS), _NO_SUMS)
        daily.append(dict(
            date=day, **_post_totals(sums),
            followers=audience.total_at(end_of_day, now=now),
            follower_growth=audience.growth(max(day_start, window.since), end_of_day, now=now),
        ))
    return dict(
        period=window.period, since=window.since, until=window.until, totals=totals, previous=before,
        change=_change(totals, before), by_platform=by_platform, daily=daily,
    )


def _order(sort: str | None):
    sort = sort or DEFAULT_SORT
    descending = sort.startswith("-")
    column = SORT_COLUMNS.get(sort[1:] if descending else sort)
    if column is None:
        known = ", ".join(SORT_COLUMNS)
        raise ApiError.field_invalid("sort", f"sort must be one of {known}, with a leading - for descending order.")
    primary = column.desc().nulls_last() if descending else column.asc().nulls_last()
    return [primary, TrackedPost.published_at.desc(), TrackedPost.id]


def list_post_metrics(
    *, session: Session, principal: Principal, platform: str | None = None, since=None, until=None,
    sort: str | None = None, limit: int = 20, offset: int = 0,
) -> Page:
    """Per-target metrics of measured posts, newest first unless sorted otherwise."""
    scope = TenantScope.of(session, principal)
    since, until = parse_timestamp(since, "from"), parse_timestamp(until, "to")
    if since is not None and until is not None and since >= until:
        raise ApiError.field_invalid("from", "from must be before to.")
    order = _order(sort)
    criteria = []
    if platform is not None:
        criteria.append(TrackedPost.platform == platform)
    if since is not None:
        criteria.append(TrackedPost.published_at >= since)
    if until is not None:
        criteria.append(TrackedPost.published_at < until)
    where = _measured(scope, *criteria)
    query = select(TrackedPost).where(*where).order_by(*order)
    total = select(func.count()).select_from(TrackedPost).where(*where)
    return paginate(session, query, total=total, limit=limit, offset=offset)


def top_posts(
    *, session: Session, principal: Principal, metric: str | None = None, period: str | None = None, limit: int = 10,
) -> dict:
    """The best posts of a period by one metric (posts that do not report it last out)."""
    scope = TenantScope.of(session, principal)
    window = window_of(period)
    metric = metric or "engagements"
    column = METRIC_COLUMNS.get(metric)
    if column is None:
        raise ApiError.field_invalid("metric", f"metric must be one of {', '.join(METRIC_COLUMNS)}.")
    query = (
        select(TrackedPost)
        .where(*_measured(scope, *_published_in(window.since, window.until)), column.is_not(None))
        .order_by(column.desc(), TrackedPost.published_at.desc(), TrackedPost.id.desc())
        .limit(limit)
    )
    posts = list(session.execute(query).scalars())
    return dict(period=window.period, since=window.since, until=window.until, metric=metric, posts=posts)


def audience(*, session: Session, principal: Principal, period: str | None = None) -> dict:
    scope = TenantScope.of(session, principal)
    now = clock.now()
    window = window_of(period, now=now)
    followers = _Audience(scope, window.since)
    platforms = sorted({followers.platform_of[a] for a in followers.accounts()})
    growth = []
    for day in _days(window):
        end_of_day = min(dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc) + DAY, now)
        growth.append(dict(date=day, followers=followers.total_at(end_of_day, now=now)))
    return dict(
        period=window.period, since=window.since, until=window.until,
        followers=followers.total_at(now, now=now),
        net_new=followers.growth(window.since, window.until, now=now),
        by_platform=[
            dict(
                platform=platform, accounts=len(followers.accounts(platform)),
                followers=followers.total_at(now, now=now, platform=platform),
                net_new=followers.growth(window.since, window.until, now=now, platform=platform),
            )
            for platform in platforms
        ],
        growth=growth,
        # Neither Mastodon nor Bluesky (nor the sandbox) reports who the followers are.
        demographics={},
    )


# --- for other areas -----------------------------------------------------------------


def to_post_metrics(row: TrackedPost) -> PostMetrics:
    return PostMetrics(
        target_id=row.target_id, post_id=row.post_id, platform=row.platform, account_id=row.account_id,
        published_at=row.published_at, content_length=row.content_length, impressions=row.impressions,
        reach=row.reach, clicks=row.clicks, likes=row.likes, comments=row.comments, shares=row.shares,
        followers_at_post=row.followers_at_post, engagements=row.engagements, engagement_rate=row.engagement_rate,
    )


def published_post_metrics(scope: TenantScope, *, since: dt.datetime, until: dt.datetime) -> list[PostMetrics]:
    """The latest metrics of each target published in [since, until) and measured at
    least once, oldest first."""
    query = (
        select(TrackedPost)
        .where(*_measured(scope, *_published_in(since, until)))
        .order_by(TrackedPost.published_at, TrackedPost.id)
    )
    return [to_post_metrics(row) for row in scope.session.execute(query).scalars()]
