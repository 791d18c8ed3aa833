"""The metric definitions every analytics report shares.

engagements = likes + comments + shares (+ clicks where the platform reports them).
engagement rate = engagements / impressions where the platform reports impressions,
else engagements / followers of the account when the post was published (Mastodon
and Bluesky report no impressions); None when the denominator is unknown or zero.
"""
from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass


def engagements_of(*, likes: int, comments: int, shares: int, clicks: int | None) -> int:
    return likes + comments + shares + (clicks or 0)


def engagement_rate_of(*, engagements: int, impressions: int | None, followers: int | None) -> float | None:
    if impressions is not None:
        return engagements / impressions if impressions > 0 else None
    if followers:
        return engagements / followers
    return None


@dataclass(frozen=True)
class PostMetrics:
    """The latest metrics of one published target (one post on one account)."""

    target_id: uuid.UUID
    post_id: uuid.UUID
    platform: str
    account_id: uuid.UUID
    published_at: datetime.datetime  # aware, UTC
    content_length: int  # characters of the published text
    impressions: int | None  # None where the platform does not report it
    reach: int | None
    clicks: int | None
    likes: int
    comments: int
    shares: int
    followers_at_post: int | None  # followers of the account when the post was published
    engagements: int
    engagement_rate: float | None  # a fraction (0.05 = 5 %)
