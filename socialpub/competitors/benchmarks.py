"""`GET /competitors/benchmarks` and `GET /competitors/compare`: the workspace beside
its competitors over one range of UTC days (socialpub.competitors.figures).

The workspace's own figures come from analytics, read as analytics offers them to
other areas: `published_post_metrics` (its posts published in the range, each with
its latest engagements and engagement rate, as analytics defines them) and the
followers of its tracked accounts (`Audience`, their daily snapshots). Analytics
never imports competitors.

- benchmarks: for each metric, the workspace's value (`you`), the mean of the
  competitors' values (`competitorAverage`, the workspace left out) and the mean of
  everyone's (`landscapeAverage`, the workspace in); a null value is left out of a
  mean, and a mean of nothing is null;
- compare: the chosen competitors and the workspace side by side, each with its
  value of each chosen metric and its daily series (posts, engagements, engagement
  rate and followers of each day of the range).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from persistence.workspaces import Workspace
from socialpub import clock
from socialpub.analytics.aggregates import Audience
from socialpub.analytics.service import published_post_metrics
from socialpub.competitors import figures
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope


class _Day:
    """One day of the workspace's figures, shaped as a competitor's daily row."""

    def __init__(self, day):
        self.day = day
        self.posts = self.engagements = self.rated_posts = 0
        self.engagements_squared = self.rate_sum = 0.0
        self.followers = None


def own_days(scope: TenantScope, span: figures.Range) -> list[_Day]:
    """The workspace's days in the range, from analytics."""
    days = {day: _Day(day) for day in span.each_day()}
    for post in published_post_metrics(scope, since=span.since, until=span.until):
        row = days.get(post.published_at.astimezone(span.since.tzinfo).date())
        if row is None:
            continue
        row.posts += 1
        row.engagements += post.engagements
        row.engagements_squared += float(post.engagements) ** 2
        if post.engagement_rate is not None:
            row.rate_sum += post.engagement_rate
            row.rated_posts += 1
    now = clock.now()
    audience = Audience(scope, span.since)
    if audience.accounts():
        for day, row in days.items():
            end = min(figures.Range(day, day).until, now)
            if end > span.since and any(audience.at(a, end, now=now) is not None for a in audience.accounts()):
                row.followers = audience.total_at(end, now=now)
    return [days[day] for day in sorted(days)]


def _mean(values) -> float | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known), 6) if known else None


def benchmarks(*, session: Session, principal: Principal, since=None, until=None, metrics=None) -> dict:
    scope = TenantScope.of(session, principal)
    span = figures.range_of(since, until)
    names = figures.checked_metrics(metrics)
    competitors = figures.chosen(scope)
    theirs = [summary for summary, _ in figures.summaries(session, competitors, span).values()]
    ours = figures.summarize(own_days(scope, span))
    found = []
    for name in names:
        you = ours.metric(name, span.days)
        values = [summary.metric(name, span.days) for summary in theirs]
        found.append(dict(metric=name, you=you, competitor_average=_mean(values), landscape_average=_mean([you, *values]),
                          competitors=len(competitors)))
    return dict(since=span.first, until=span.last, days=span.days, metrics=found)


def _series(rows, span: figures.Range) -> list[dict]:
    by_day = {row.day: row for row in rows}
    series = []
    for day in span.each_day():
        row = by_day.get(day)
        series.append(dict(
            date=day, posts=row.posts if row else 0, engagements=int(row.engagements) if row else 0,
            engagement_rate=round(row.rate_sum / row.rated_posts, 6) if row and row.rated_posts else None,
            followers=row.followers if row else None,
        ))
    return series


def compare(*, session: Session, principal: Principal, competitor_ids=None, metrics=None, since=None,
            until=None) -> dict:
    scope = TenantScope.of(session, principal)
    span = figures.range_of(since, until)
    names = figures.checked_metrics(metrics)
    competitors = figures.chosen(scope, competitor_ids)
    daily = figures.daily_rows(session, competitors, span)
    ours = own_days(scope, span)
    workspace = session.get(Workspace, scope.workspace_id)
    entries = [_entry(None, workspace.name if workspace else "You", True, ours, names, span)]
    entries += [_entry(c.id, c.name, False, daily.get(c.id, []), names, span) for c in competitors]
    return dict(since=span.first, until=span.last, days=span.days, metrics=names, entries=entries)


def _entry(competitor_id, name: str, you: bool, rows, names, span) -> dict:
    summary = figures.summarize(rows)
    return dict(competitor_id=competitor_id, name=name, you=you,
                values=[dict(metric=metric, value=summary.metric(metric, span.days)) for metric in names],
                daily=_series(rows, span))

