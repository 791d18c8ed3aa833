"""Insights into what works, computed from the workspace's published posts' metrics.

Every insight is arithmetic on the numbers it shows as evidence: nothing is claimed
about a group of fewer than MIN_SAMPLE posts with an engagement rate, and a
difference smaller than MIN_DIFFERENCE (relative) is not worth a claim. A model,
when one is configured, may only reword an insight's title and detail.

The engagement rate of a group is the mean of its posts' rates (each post counts
once whatever its reach), over the posts whose rate is known.
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, replace
from statistics import fmean

from socialpub.analytics.metrics import PostMetrics

MIN_SAMPLE = 5
MIN_DIFFERENCE = 0.2
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Content length groups, in characters: (label, from, to exclusive).
LENGTH_GROUPS: tuple[tuple[str, int, int | None], ...] = (
    ("under 100 characters", 0, 100),
    ("100 to 299 characters", 100, 300),
    ("300 characters or more", 300, None),
)


class InsightKind:
    BEST_TIME = "best_time"
    PLATFORM = "platform"
    CONTENT_LENGTH = "content_length"
    TREND = "trend"


@dataclass(frozen=True)
class Evidence:
    segment: str
    posts: int
    engagement_rate: float
    baseline: str
    baseline_posts: int
    baseline_engagement_rate: float

    @property
    def relative_difference(self) -> float:
        """(rate - baseline) / baseline, as a fraction; 0 when the baseline is 0."""
        if self.baseline_engagement_rate == 0:
            return 0.0
        return (self.engagement_rate - self.baseline_engagement_rate) / self.baseline_engagement_rate


@dataclass(frozen=True)
class Insight:
    kind: str
    title: str
    detail: str
    evidence: Evidence


@dataclass(frozen=True)
class InsightReport:
    since: dt.datetime
    until: dt.datetime
    posts_analyzed: int
    posts_with_rate: int
    insights: list[Insight]

    def rephrased(self, phrasings: list[tuple[str, str]]) -> "InsightReport":
        """The same insights and evidence with other titles and details."""
        insights = [
            replace(insight, title=title, detail=detail) for insight, (title, detail) in zip(self.insights, phrasings)
        ]
        return replace(self, insights=insights)


def _percent(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def _change(evidence: Evidence) -> str:
    return f"{abs(evidence.relative_difference) * 100:.0f}%"


def _rated(metrics: list[PostMetrics]) -> list[PostMetrics]:
    return [post for post in metrics if post.engagement_rate is not None]


def _rate(posts: list[PostMetrics]) -> float:
    return fmean(post.engagement_rate for post in posts)  # type: ignore[misc]


def _evidence(segment: str, group: list[PostMetrics], baseline: str, rest: list[PostMetrics]) -> Evidence | None:
    """The comparison of a group with the rest, when both are large enough to say anything."""
    if len(group) < MIN_SAMPLE or len(rest) < MIN_SAMPLE:
        return None
    return Evidence(
        segment=segment, posts=len(group), engagement_rate=_rate(group),
        baseline=baseline, baseline_posts=len(rest), baseline_engagement_rate=_rate(rest),
    )


def _notable(evidence: Evidence | None) -> bool:
    return evidence is not None and abs(evidence.relative_difference) >= MIN_DIFFERENCE


def _slot(published_at: dt.datetime) -> tuple[int, int]:
    moment = published_at.astimezone(dt.timezone.utc)
    return moment.weekday(), moment.hour


def best_time(posts: list[PostMetrics]) -> Insight | None:
    """The weekday and hour (UTC) with the highest engagement rate, among slots with
    at least MIN_SAMPLE posts, when it beats the other slots by MIN_DIFFERENCE."""
    slots: dict[tuple[int, int], list[PostMetrics]] = defaultdict(list)
    for post in posts:
        slots[_slot(post.published_at)].append(post)
    candidates = []
    for (weekday, hour), group in slots.items():
        if len(group) < MIN_SAMPLE:
            continue
        rest = [post for post in posts if _slot(post.published_at) != (weekday, hour)]
        segment = f"{WEEKDAYS[weekday]} {hour:02d}:00-{hour:02d}:59 UTC"
        evidence = _evidence(segment, group, "posts at other times", rest)
        if evidence is not None:
            candidates.append((-evidence.engagement_rate, weekday, hour, evidence))
    if not candidates:
        return None
    _, weekday, hour, evidence = min(candidates)
    if evidence.relative_difference < MIN_DIFFERENCE:
        return None
    return Insight(
        kind=InsightKind.BEST_TIME,
        title=f"{WEEKDAYS[weekday]}s at {hour:02d}:00 UTC are your best time to post",
        detail=(
            f"Posts published on {WEEKDAYS[weekday]}s between {hour:02d}:00 and {hour:02d}:59 UTC averaged a "
            f"{_percent(evidence.engagement_rate)} engagement rate over {evidence.posts} posts, "
            f"{_change(evidence)} above the {_percent(evidence.baseline_engagement_rate)} of your "
            f"{evidence.baseline_posts} posts at other times."
        ),
        evidence=evidence,
    )


def _compared(kind: str, label: str, noun: str, evidence: Evidence) -> Insight:
    better = evidence.relative_difference > 0
    return Insight(
        kind=kind,
        title=f"{label} {'outperform' if better else 'underperform'}",
        detail=(
            f"{noun} averaged a {_percent(evidence.engagement_rate)} engagement rate over {evidence.posts} posts, "
            f"{_change(evidence)} {'above' if better else 'below'} the {_percent(evidence.baseline_engagement_rate)} "
            f"of {evidence.baseline} ({evidence.baseline_posts} posts)."
        ),
        evidence=evidence,
    )


def platform_insights(posts: list[PostMetrics]) -> list[Insight]:
    """Each platform against all the others, largest difference first."""
    insights = []
    for platform in sorted({post.platform for post in posts}):
        group = [post for post in posts if post.platform == platform]
        rest = [post for post in posts if post.platform != platform]
        evidence = _evidence(platform, group, "your posts on other platforms", rest)
        if _notable(evidence):
            assert evidence is not None
            name = platform.capitalize()
            insights.append(_compared(InsightKind.PLATFORM, f"{name} posts", f"Your {name} posts", evidence))
    return sorted(insights, key=lambda insight: -abs(insight.evidence.relative_difference))


def _length_group(length: int) -> str:
    for label, start, end in LENGTH_GROUPS:
        if length >= start and (end is None or length < end):
            return label
    return LENGTH_GROUPS[-1][0]


def length_insights(posts: list[PostMetrics]) -> list[Insight]:
    """Each content length group against the other lengths, largest difference first."""
    insights = []
    for label, _, _ in LENGTH_GROUPS:
        group = [post for post in posts if _length_group(post.content_length) == label]
        rest = [post for post in posts if _length_group(post.content_length) != label]
        evidence = _evidence(label, group, "posts of other lengths", rest)
        if _notable(evidence):
            assert evidence is not None
            insights.append(_compared(InsightKind.CONTENT_LENGTH, f"Posts of {label}", f"Posts of {label}", evidence))
    return sorted(insights, key=lambda insight: -abs(insight.evidence.relative_difference))


def trend(current: list[PostMetrics], previous: list[PostMetrics], days: int) -> Insight | None:
    """The engagement rate of the last `days` against the `days` before them."""
    evidence = _evidence(f"the last {days} days", current, f"the {days} days before", previous)
    if not _notable(evidence):
        return None
    assert evidence is not None
    rising = evidence.relative_difference > 0
    return Insight(
        kind=InsightKind.TREND,
        title=f"Engagement is {'up' if rising else 'down'} {_change(evidence)} on the previous {days} days",
        detail=(
            f"Your posts of the last {days} days averaged a {_percent(evidence.engagement_rate)} engagement rate "
            f"over {evidence.posts} posts, against {_percent(evidence.baseline_engagement_rate)} over "
            f"{evidence.baseline_posts} posts in the {days} days before."
        ),
        evidence=evidence,
    )


def compute_insights(metrics: list[PostMetrics], *, until: dt.datetime, days: int) -> InsightReport:
    """The insights of the `days` before `until`. `metrics` may reach back twice as far:
    the window before is what the trend is measured against."""
    since = until - dt.timedelta(days=days)
    before = since - dt.timedelta(days=days)
    current = [post for post in metrics if since <= post.published_at < until]
    previous = [post for post in metrics if before <= post.published_at < since]
    rated = _rated(current)
    insights: list[Insight] = []
    found = best_time(rated)
    if found is not None:
        insights.append(found)
    insights.extend(platform_insights(rated))
    insights.extend(length_insights(rated))
    change = trend(rated, _rated(previous), days)
    if change is not None:
        insights.append(change)
    return InsightReport(
        since=since, until=until, posts_analyzed=len(current), posts_with_rate=len(rated), insights=insights,
    )
