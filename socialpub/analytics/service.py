"""The analytics reports, read through a TenantScope from the latest reading of each
tracked target (persistence.analytics.TrackedPost) and the daily follower snapshots,
summed by aggregates.py; and `published_post_metrics`, the same readings for other
areas.

Post metrics are lifetime counts of the posts published in a period (a post published
on the 3rd counts all its likes, also those of the 20th, in the period holding the
3rd). Followers are the accounts' audience at a moment; follower growth is the
difference between two moments. Definitions of engagements and engagement rate:
socialpub.analytics.metrics.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from persistence.analytics import TrackedPost
from persistence.posts import Post
from socialpub import clock
from socialpub.analytics import rollups
from socialpub.analytics.aggregates import (
    DAY, NO_SUMS, Audience, PostGroups, Window, change_of, days_of, measured_criteria, post_totals, published_in,
    start_of_day, totals_of, with_audience,
)
from socialpub.analytics.metrics import PostMetrics
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import TenantScope, scoped

PERIODS = {"7d": 7, "30d": 30, "90d": 90}
DEFAULT_PERIOD = "30d"

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


def window_of(period: str | None, *, now: dt.datetime | None = None) -> Window:
    period = period or DEFAULT_PERIOD
    if period not in PERIODS:
        raise ApiError.field_invalid("period", f"period must be one of {', '.join(PERIODS)}.")
    now = now or clock.now()
    return Window(period, now - dt.timedelta(days=PERIODS[period]), now)


# --- reports ----------------------------------------------------------------------------


@scoped
def overview(scope: TenantScope, *, period: str | None = None) -> dict:
    now = clock.now()
    window = window_of(period, now=now)
    previous = window.previous
    # The previous window needs its two ends only; the current one every day.
    audience = Audience(scope, window.since, also_at=(previous.since,))
    posts = PostGroups(scope, window, previous)
    current_groups = posts.of(window)

    totals = with_audience(totals_of(current_groups), audience, window, now=now)
    before = with_audience(totals_of(posts.of(previous)), audience, previous, now=now)
    platforms = sorted(
        {platform for _, platform in current_groups if platform != rollups.ALL_PLATFORMS}
        | {audience.platform_of[account] for account in audience.accounts()}
    )
    by_platform = [
        dict(platform=platform, **with_audience(totals_of(current_groups, platform), audience, window, now=now, platform=platform))
        for platform in platforms
    ]
    daily = []
    for day in days_of(window):
        day_start = start_of_day(day)
        end_of_day = min(day_start + DAY, now)
        sums = current_groups.get((day, rollups.ALL_PLATFORMS), NO_SUMS)
        daily.append(dict(
            date=day, **post_totals(sums),
            followers=audience.total_at(end_of_day, now=now),
            follower_growth=audience.growth(max(day_start, window.since), end_of_day, now=now),
        ))
    return dict(
        period=window.period, since=window.since, until=window.until, totals=totals, previous=before,
        change=change_of(totals, before), by_platform=by_platform, daily=daily,
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


@scoped
def list_post_metrics(
    scope: TenantScope, *, platform: str | None = None, since=None, until=None,
    sort: str | None = None, limit: int = 20, offset: int = 0,
) -> Page:
    """Per-target metrics of measured posts, newest first unless sorted otherwise."""
    session = scope.session
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
    where = measured_criteria(scope, *criteria)
    query = select(TrackedPost).where(*where).order_by(*order)
    total = select(func.count()).select_from(TrackedPost).where(*where)
    return paginate(session, query, total=total, limit=limit, offset=offset)


@scoped
def post_metrics(scope: TenantScope, *, post_id) -> list[TrackedPost]:
    """The latest metrics of each measured target of one post (404 for a post the
    principal cannot see), by platform."""
    session = scope.session
    post = scope.get(Post, post_id, resource="post")
    query = select(TrackedPost).where(*measured_criteria(scope, TrackedPost.post_id == post.id))
    return list(session.execute(query.order_by(TrackedPost.platform, TrackedPost.id)).scalars())


@scoped
def top_posts(scope: TenantScope, *, metric: str | None = None, period: str | None = None, limit: int = 10) -> dict:
    """The best posts of a period by one metric (posts that do not report it last out)."""
    session = scope.session
    window = window_of(period)
    metric = metric or "engagements"
    column = METRIC_COLUMNS.get(metric)
    if column is None:
        raise ApiError.field_invalid("metric", f"metric must be one of {', '.join(METRIC_COLUMNS)}.")
    query = (
        select(TrackedPost)
        .where(*measured_criteria(scope, *published_in(window.since, window.until)), column.is_not(None))
        .order_by(column.desc(), TrackedPost.published_at.desc(), TrackedPost.id.desc())
        .limit(limit)
    )
    posts = list(session.execute(query).scalars())
    return dict(period=window.period, since=window.since, until=window.until, metric=metric, posts=posts)


@scoped
def audience(scope: TenantScope, *, period: str | None = None) -> dict:
    now = clock.now()
    window = window_of(period, now=now)
    followers = Audience(scope, window.since)
    platforms = sorted({followers.platform_of[a] for a in followers.accounts()})
    growth = []
    for day in days_of(window):
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
        .where(*measured_criteria(scope, *published_in(since, until)))
        .order_by(TrackedPost.published_at, TrackedPost.id)
    )
    return [to_post_metrics(row) for row in scope.session.execute(query).scalars()]
