"""`GET /competitors/insights`: each chosen competitor's figures over a range of UTC
days (socialpub.competitors.figures), its top hashtags, its best posting times and
its breakout posts.

Read in four statements whatever the range: the competitors, two rows of running
totals per competitor (socialpub.competitors.totals: its figures, posting slots and
hashtags over the range are their difference; no post is read), its first and last
followers read in the range, and the posts above each competitor's breakout
threshold (through the posts' index by competitor and engagements).

- topHashtags: the TOP_HASHTAGS hashtags on most posts (ties by engagements, then by
  name);
- bestTimes: the BEST_TIMES UTC weekday (0 Monday) and hour slots with the most
  engagements per post (ties by posts, then earliest);
- breakoutPosts: posts whose engagements are above the competitor's mean + 2σ over
  the range (its `breakoutThreshold`), most engagements first, at most BREAKOUTS.
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict
from types import SimpleNamespace

from sqlalchemy import bindparam, select, text
from sqlalchemy.orm import Session

from persistence.competitors import CompetitorPost
from socialpub import claims
from socialpub.competitors import figures
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope

TOP_HASHTAGS = 10
BEST_TIMES = 5
BREAKOUTS = 10


def insights(*, session: Session, principal: Principal, since=None, until=None, competitor_ids=None) -> dict:
    scope = TenantScope.of(session, principal)
    span = figures.range_of(since, until)
    competitors = figures.chosen(scope, competitor_ids)
    return SimpleNamespace(since=span.first, until=span.last, days=span.days,
                           competitors=measure(session, competitors, span))


def measure(session, competitors, span: figures.Range) -> list:
    if not competitors:
        return []
    found_sums = figures.summaries(session, competitors, span)
    summaries = {cid: summary for cid, (summary, _) in found_sums.items()}
    tags = {cid: _hashtags(kept.hashtags) for cid, (_, kept) in found_sums.items()}
    slots = {cid: _slots(kept.slots) for cid, (_, kept) in found_sums.items()}
    thresholds = {cid: summary.breakout_threshold for cid, summary in summaries.items()}
    breakouts = _breakouts(session, thresholds, span)
    found = []
    for competitor in competitors:
        summary = summaries[competitor.id]
        # Objects, not mappings: the schemas dump them by their compiled plans.
        found.append(SimpleNamespace(
            competitor_id=competitor.id, name=competitor.name, posts=summary.posts, engagements=summary.engagements,
            **{name: summary.metric(name, span.days) for name in figures.METRICS},
            top_hashtags=tags.get(competitor.id, []), best_times=slots.get(competitor.id, []),
            breakout_threshold=None if thresholds[competitor.id] is None else round(thresholds[competitor.id], 4),
            breakout_posts=breakouts.get(competitor.id, []),
        ))
    return found


def _hashtags(counts: dict) -> list:
    ranked = sorted(((tag, posts, engagements) for tag, (posts, engagements) in counts.items() if posts > 0),
                    key=lambda e: (-e[1], -e[2], e[0]))[:TOP_HASHTAGS]
    return [SimpleNamespace(hashtag=tag, posts=posts, engagements=engagements) for tag, posts, engagements in ranked]


def _slots(counts: dict) -> list:
    found = []
    for slot, (posts, engagements) in counts.items():
        if posts > 0:
            weekday, _, hour = slot.partition("-")
            found.append((-engagements / posts, -posts, int(weekday), int(hour)))
    return [SimpleNamespace(weekday=weekday, hour=hour, posts=-posts, engagements_per_post=round(-per_post, 4))
            for per_post, posts, weekday, hour in heapq.nsmallest(BEST_TIMES, found)]


def _breakouts(session, thresholds: dict, span) -> dict:
    """Each competitor's BREAKOUTS posts of the range with the most engagements above
    its threshold, each competitor's found by a walk down the index by competitor and
    engagements that stops at the BREAKOUTS-th: on PostgreSQL all in one statement (a
    lateral join over the competitors and their thresholds, given as two arrays),
    elsewhere one statement of the same shape per competitor."""
    # Engagements are whole: above the threshold is above its floor, which the index
    # compares as it is kept.
    judged = {cid: math.floor(threshold) for cid, threshold in thresholds.items() if threshold is not None}
    grouped: dict = defaultdict(list)
    if not judged:
        return grouped
    window = {"since": span.since, "until": span.until}
    if claims.has_row_locks(session):
        found = session.execute(
            select(CompetitorPost).from_statement(_TOP_EACH),
            {"ids": list(judged), "aboves": list(judged.values()), **window},
        ).scalars()
        for post in found:
            grouped[post.competitor_id].append(post)
    else:
        for cid, above in judged.items():
            grouped[cid] = list(session.execute(_TOP, {"competitor_id": cid, "above": above, **window}).scalars())
    for posts in grouped.values():
        posts.sort(key=lambda post: (-post.engagements, -post.posted_at.timestamp(), str(post.id)))
    return grouped


_TOP = (
    select(CompetitorPost)
    .where(CompetitorPost.competitor_id == bindparam("competitor_id"),
           CompetitorPost.engagements > bindparam("above"),
           CompetitorPost.posted_at >= bindparam("since"), CompetitorPost.posted_at < bindparam("until"))
    .order_by(CompetitorPost.engagements.desc(), CompetitorPost.posted_at.desc(), CompetitorPost.id)
    .limit(BREAKOUTS)
)
_TOP_EACH = text(
    "SELECT p.* FROM unnest(CAST(:ids AS uuid[]), CAST(:aboves AS bigint[])) AS judged(competitor_id, above) "
    "CROSS JOIN LATERAL (SELECT * FROM competitor_posts WHERE competitor_posts.competitor_id = judged.competitor_id "
    "AND competitor_posts.engagements > judged.above AND competitor_posts.posted_at >= :since "
    "AND competitor_posts.posted_at < :until "
    f"ORDER BY competitor_posts.engagements DESC, competitor_posts.posted_at DESC, competitor_posts.id LIMIT {BREAKOUTS}) p"
)
