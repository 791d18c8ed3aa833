"""Insights computed from published posts' metrics: every claim backed by its numbers,
none below the minimum sample or the minimum difference."""
from __future__ import annotations

import datetime as dt
import itertools
import uuid

import pytest

from socialpub.ai.insights import MIN_SAMPLE, Insight, InsightReport, compute_insights
from socialpub.analytics.metrics import PostMetrics

UNTIL = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)  # a Monday
TUESDAY_9 = dt.datetime(2026, 11, 17, 9, 15, tzinfo=dt.timezone.utc)
THURSDAY_15 = dt.datetime(2026, 11, 19, 15, 40, tzinfo=dt.timezone.utc)
_ids = itertools.count()


def metrics(*, at: dt.datetime = TUESDAY_9, rate: float | None = 0.02, platform: str = "twitter",
            length: int = 150, impressions: int | None = 1000) -> PostMetrics:
    engagements = round((rate or 0) * (impressions or 1000))
    return PostMetrics(
        target_id=uuid.uuid4(), post_id=uuid.uuid4(), platform=platform, account_id=uuid.UUID(int=next(_ids) % 3),
        published_at=at, content_length=length, impressions=impressions, reach=None, clicks=None,
        likes=engagements, comments=0, shares=0, followers_at_post=None, engagements=engagements,
        engagement_rate=rate,
    )


def many(count: int, **fields) -> list[PostMetrics]:
    return [metrics(**fields) for _ in range(count)]


def report(posts: list[PostMetrics], days: int = 30) -> InsightReport:
    return compute_insights(posts, until=UNTIL, days=days)


def of_kind(found: InsightReport, kind: str) -> list[Insight]:
    return [insight for insight in found.insights if insight.kind == kind]


class TestBestTime:
    def test_the_slot_with_the_best_rate_is_named_with_its_sample_and_baseline(self):
        posts = many(5, at=TUESDAY_9, rate=0.06) + many(6, at=THURSDAY_15, rate=0.02)
        [best] = of_kind(report(posts), "best_time")
        assert best.title == "Tuesdays at 09:00 UTC are your best time to post"
        evidence = best.evidence
        assert (evidence.segment, evidence.posts, evidence.baseline_posts) == ("Tuesday 09:00-09:59 UTC", 5, 6)
        assert evidence.engagement_rate == pytest.approx(0.06)
        assert evidence.baseline_engagement_rate == pytest.approx(0.02)
        assert evidence.relative_difference == pytest.approx(2.0)
        assert "6.0% engagement rate over 5 posts" in best.detail and "2.0%" in best.detail and "200%" in best.detail

    def test_no_claim_about_a_slot_below_the_minimum_sample(self):
        # Four great posts in one slot are not enough, however great.
        posts = many(MIN_SAMPLE - 1, at=TUESDAY_9, rate=0.5) + many(10, at=THURSDAY_15, rate=0.02)
        assert of_kind(report(posts), "best_time") == []

    def test_no_claim_without_enough_other_posts_to_compare_with(self):
        posts = many(8, at=TUESDAY_9, rate=0.06) + many(MIN_SAMPLE - 1, at=THURSDAY_15, rate=0.02)
        assert of_kind(report(posts), "best_time") == []

    def test_no_claim_when_the_best_slot_is_barely_better(self):
        posts = many(5, at=TUESDAY_9, rate=0.021) + many(5, at=THURSDAY_15, rate=0.02)
        assert of_kind(report(posts), "best_time") == []

    def test_hours_are_slots_of_their_own_and_read_in_utc(self):
        # 10:30 at +01:00 is 09:30 UTC: the same slot as 09:15 UTC.
        plus_one = dt.timezone(dt.timedelta(hours=1))
        same_slot = TUESDAY_9.replace(hour=10, minute=30, tzinfo=plus_one)
        next_hour = TUESDAY_9.replace(hour=10)
        posts = many(3, at=TUESDAY_9, rate=0.08) + many(2, at=same_slot, rate=0.08) + many(5, at=next_hour, rate=0.01)
        [best] = of_kind(report(posts), "best_time")
        assert best.evidence.segment == "Tuesday 09:00-09:59 UTC" and best.evidence.posts == 5

    def test_posts_without_a_rate_are_left_out_of_every_sample(self):
        posts = many(4, at=TUESDAY_9, rate=0.06) + many(3, at=TUESDAY_9, rate=None) + many(6, at=THURSDAY_15, rate=0.02)
        found = report(posts)
        assert of_kind(found, "best_time") == []
        assert (found.posts_analyzed, found.posts_with_rate) == (13, 10)


class TestPlatformsAndLengths:
    def test_platforms_that_do_better_and_worse_are_named(self):
        posts = (many(5, platform="linkedin", rate=0.05, at=THURSDAY_15) + many(5, platform="twitter", rate=0.02)
                 + many(5, platform="mastodon", rate=0.02, at=THURSDAY_15))
        found = of_kind(report(posts), "platform")
        titles = [insight.title for insight in found]
        assert titles[0] == "Linkedin posts outperform"
        assert set(titles[1:]) == {"Twitter posts underperform", "Mastodon posts underperform"}
        linkedin = found[0].evidence
        assert (linkedin.posts, linkedin.baseline_posts) == (5, 10)
        assert linkedin.engagement_rate == pytest.approx(0.05) and linkedin.baseline_engagement_rate == pytest.approx(0.02)
        assert "150% above the 2.0% of your posts on other platforms (10 posts)" in found[0].detail

    def test_a_platform_below_the_minimum_sample_is_not_judged(self):
        posts = many(4, platform="linkedin", rate=0.2) + many(10, platform="twitter", rate=0.02)
        assert of_kind(report(posts), "platform") == []

    def test_a_small_difference_is_not_a_claim(self):
        posts = many(5, platform="linkedin", rate=0.022) + many(5, platform="twitter", rate=0.02)
        assert of_kind(report(posts), "platform") == []

    def test_content_lengths_that_do_better_or_worse(self):
        posts = many(5, length=80, rate=0.01) + many(5, length=200, rate=0.04) + many(5, length=400, rate=0.04)
        found = of_kind(report(posts), "content_length")
        assert found[0].title == "Posts of under 100 characters underperform"
        assert found[0].evidence.relative_difference == pytest.approx(-0.75)
        assert "75% below" in found[0].detail
        assert {insight.evidence.segment for insight in found[1:]} <= {"100 to 299 characters", "300 characters or more"}

    def test_length_group_edges(self):
        posts = many(5, length=99, rate=0.01) + many(5, length=100, rate=0.04) + many(5, length=300, rate=0.04)
        [short, *_] = of_kind(report(posts), "content_length")
        assert short.evidence.segment == "under 100 characters" and short.evidence.posts == 5


class TestTrend:
    def test_engagement_up_on_the_period_before(self):
        earlier = UNTIL - dt.timedelta(days=40)
        posts = many(5, at=earlier, rate=0.02) + many(5, at=TUESDAY_9, rate=0.03)
        [trend] = of_kind(report(posts), "trend")
        assert trend.title == "Engagement is up 50% on the previous 30 days"
        assert (trend.evidence.segment, trend.evidence.baseline) == ("the last 30 days", "the 30 days before")
        assert (trend.evidence.posts, trend.evidence.baseline_posts) == (5, 5)

    def test_engagement_down(self):
        earlier = UNTIL - dt.timedelta(days=10)
        posts = many(5, at=earlier, rate=0.04) + many(5, at=UNTIL - dt.timedelta(days=1), rate=0.02)
        [trend] = of_kind(report(posts, days=7), "trend")
        assert trend.title == "Engagement is down 50% on the previous 7 days"

    def test_no_trend_without_enough_posts_before(self):
        posts = many(4, at=UNTIL - dt.timedelta(days=40), rate=0.01) + many(5, rate=0.05)
        assert of_kind(report(posts), "trend") == []

    def test_posts_outside_both_windows_are_ignored(self):
        long_ago = UNTIL - dt.timedelta(days=61)
        posts = many(10, at=long_ago, rate=0.5) + many(5, at=UNTIL, rate=0.5)  # until is exclusive
        found = report(posts)
        assert found.insights == [] and found.posts_analyzed == 0


class TestReport:
    def test_too_little_data_claims_nothing(self):
        found = report(many(3))
        assert found.insights == []
        assert (found.since, found.until) == (UNTIL - dt.timedelta(days=30), UNTIL)

    def test_no_metrics_at_all(self):
        found = report([])
        assert (found.posts_analyzed, found.posts_with_rate, found.insights) == (0, 0, [])

    def test_kinds_come_in_a_stable_order(self):
        earlier = UNTIL - dt.timedelta(days=40)
        posts = (many(5, at=TUESDAY_9, rate=0.08, platform="linkedin", length=400)
                 + many(10, at=THURSDAY_15, rate=0.02, length=80) + many(5, at=earlier, rate=0.01))
        kinds = [insight.kind for insight in report(posts).insights]
        assert kinds == sorted(kinds, key=["best_time", "platform", "content_length", "trend"].index)
        assert set(kinds) == {"best_time", "platform", "content_length", "trend"}

    def test_rephrasing_keeps_the_evidence(self):
        posts = many(5, at=TUESDAY_9, rate=0.06) + many(6, at=THURSDAY_15, rate=0.02)
        found = report(posts)
        reworded = found.rephrased([("Tuesday mornings win", "They do.")])
        assert reworded.insights[0].title == "Tuesday mornings win"
        assert reworded.insights[0].evidence == found.insights[0].evidence

    def test_a_zero_baseline_makes_no_relative_claim(self):
        posts = many(5, at=TUESDAY_9, rate=0.05) + many(5, at=THURSDAY_15, rate=0.0)
        found = report(posts)
        assert of_kind(found, "best_time") == []
