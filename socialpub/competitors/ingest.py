"""Storing a competitor's posts and followers, and the daily figures kept with them.

A competitor's posts come from two places: the refresh of its public profiles
(socialpub.competitors.refresh: `source` "profile", with likes, replies and reposts)
and listening's ingests (socialpub.competitors.subscribers: signals one of its
handles wrote, `source` "listening", without counts). A post is kept once per
(competitor, platform, external id): the two agree on the ids (a Mastodon status's
URI, a Bluesky at:// URI), so a post listening found first gets its counts when its
profile is read.

engagements = likes + replies + reposts; a post's engagement rate is its
engagements over its handle's followers when it was first stored (a fraction; None
when they were not known).

Every change of posts adds its differences to the competitor's daily figures
(`CompetitorDaily`: posts, engagements, engagements squared, the rates' sum and how
many were rated) with one upsert, its rows summed in memory and sent in key order
(concurrent writers lock shared rows in the same order), and to its running totals
with their posting slots and hashtags (socialpub.competitors.totals). A reading of
followers sets the day's `followers`.
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select

from persistence.competitors import Competitor, CompetitorDaily, CompetitorPost
from socialpub import claims
from socialpub.competitors import totals
from socialpub.validation import unstorable

_ADDED = ("posts", "engagements", "engagements_squared", "rate_sum", "rated_posts")


@dataclass(frozen=True)
class IncomingPost:
    """A post to store, whichever way it came."""

    platform: str
    external_id: str
    handle: str | None
    text: str
    url: str | None
    posted_at: dt.datetime
    likes: int = 0
    replies: int = 0
    reposts: int = 0
    hashtags: tuple[str, ...] = ()
    counted: bool = True  # False: the counts are not known (a listening signal)


def rate_of(engagements: int, followers: int | None) -> float | None:
    return engagements / followers if followers else None


def _clean(text: str | None, longest: int) -> str:
    text = (text or "")[:longest]
    return "" if unstorable(text) else text


def _figures(engagements: int, rate: float | None) -> tuple:
    return (engagements, float(engagements) ** 2, rate or 0.0, 1 if rate is not None else 0)


def store_posts(session, *, competitor, posts: list[IncomingPost], followers: dict[str, int | None],
                source: str, now: dt.datetime) -> tuple[int, int]:
    """Stores `posts` of `competitor` (new ones added, known ones given their new
    counts when `counted`) and adds the differences to its daily figures, in the
    caller's transaction. `followers`: the handles' followers now, by handle key
    (for new posts' rates). Returns (added, updated)."""
    unique: dict[tuple, IncomingPost] = {}
    for post in posts:
        if post.external_id and len(post.external_id) <= 255 and not unstorable(post.external_id):
            unique.setdefault((post.platform, post.external_id), post)
    if not unique:
        return 0, 0
    # The competitor's writers take turns (a refresh, an ingest of listening signals):
    # its row is locked before any of its posts or figures is written.
    session.execute(claims.lock_rows(session, select(Competitor.id).where(Competitor.id == competitor.id)))
    known = {
        (row.platform, row.external_id): row for row in session.execute(
            select(CompetitorPost).where(CompetitorPost.competitor_id == competitor.id,
                                         CompetitorPost.external_id.in_([key[1] for key in unique]))
        ).scalars()
    }
    deltas: dict[dt.date, totals.Delta] = defaultdict(totals.Delta)
    new_rows, new_tags = [], {}
    updated = 0
    for key, post in unique.items():
        engagements = post.likes + post.replies + post.reposts if post.counted else 0
        row = known.get(key)
        if row is None:
            posted_at = post.posted_at.astimezone(dt.timezone.utc)
            followers_now = followers.get(post.handle) if post.handle is not None else None
            rate = rate_of(engagements, followers_now) if post.counted else None
            tags = [tag for tag in post.hashtags if tag and not unstorable(tag)][:30]
            new_id = uuid.uuid4()
            new_rows.append(dict(
                id=new_id, competitor_id=competitor.id, workspace_id=competitor.workspace_id,
                livemode=competitor.livemode, platform=post.platform, external_id=post.external_id,
                handle=_clean(post.handle, 100) or None, source=source, content=_clean(post.text, 20000),
                url=_clean(post.url, 2048) or None, posted_at=posted_at, likes=post.likes if post.counted else 0,
                comments=post.replies if post.counted else 0, shares=post.reposts if post.counted else 0,
                engagements=engagements, followers_at_post=followers_now, engagement_rate=rate, hashtags=tags,
                created_at=now, updated_at=now,
            ))
            new_tags[new_id] = (posted_at, tags, engagements, _figures(engagements, rate))
            continue
        if not post.counted or (row.likes, row.comments, row.shares) == (post.likes, post.replies, post.reposts):
            continue
        before = _figures(row.engagements, row.engagement_rate)
        row.likes, row.comments, row.shares, row.engagements = post.likes, post.replies, post.reposts, engagements
        row.engagement_rate = rate_of(engagements, row.followers_at_post)
        row.source, row.updated_at = "profile", now
        after = _figures(row.engagements, row.engagement_rate)
        posted_at = row.posted_at.astimezone(dt.timezone.utc)
        delta = deltas[posted_at.date()]
        for index in range(4):
            delta.sums[index + 1] += after[index] - before[index]
        delta.count("slots", totals.slot_of(posted_at), 0, after[0] - before[0])
        for tag in row.hashtags or ():
            delta.count("hashtags", tag, 0, after[0] - before[0])
        updated += 1
    inserted = set(claims.insert_new(session, CompetitorPost, new_rows, unique=["competitor_id", "platform", "external_id"],
                                     returning=CompetitorPost.id)) if new_rows else set()
    for new_id in inserted:
        posted_at, tags, engagements, figures = new_tags[new_id]
        delta = deltas[posted_at.date()]
        delta.sums[0] += 1
        for index in range(4):
            delta.sums[index + 1] += figures[index]
        delta.count("slots", totals.slot_of(posted_at), 1, engagements)
        for tag in tags:
            delta.count("hashtags", tag, 1, engagements)
    _add_days(session, competitor.id, deltas)
    totals.add(session, competitor.id, deltas)
    return len(inserted), updated


def _add_days(session, competitor_id, deltas: dict) -> None:
    rows = [dict(competitor_id=competitor_id, day=day, posts=d.sums[0], engagements=int(d.sums[1]),
                 engagements_squared=d.sums[2], rate_sum=d.sums[3], rated_posts=d.sums[4], followers=None)
            for day, d in sorted(deltas.items()) if any(d.sums)]
    claims.insert_adding(session, CompetitorDaily, rows, unique=["competitor_id", "day"], adding=_ADDED)


def record_followers(session, *, competitor_id, day: dt.date, followers: int) -> None:
    """The competitor's followers as read on `day` (the latest reading of the day wins)."""
    claims.insert_adding(session, CompetitorDaily, [dict(
        competitor_id=competitor_id, day=day, posts=0, engagements=0, engagements_squared=0.0, rate_sum=0.0,
        rated_posts=0, followers=followers,
    )], unique=["competitor_id", "day"], adding=(), replacing=("followers",))
