"""`GET /competitors/insights`: each chosen competitor's figures over a range of UTC
days (socialpub.competitors.figures), its top hashtags, its best posting times and
its breakout posts.

Read in five statements whatever the range: the competitors, their daily rows, their
daily hashtag rows summed by hashtag, their posts of the range grouped by UTC
weekday and hour (read from the posts' index by competitor and time, which carries
the weekday, the hour and the engagements on PostgreSQL), and the posts above each
competitor's breakout threshold.

- topHashtags: the TOP_HASHTAGS hashtags on most posts (ties by engagements, then by
  name);
- bestTimes: the BEST_TIMES UTC weekday (0 Monday) and hour slots with the most
  engagements per post (ties by posts, then earliest);
- breakoutPosts: posts whose engagements are above the competitor's mean + 2σ over
  the range (its `breakoutThreshold`), most engagements first, at most BREAKOUTS.
"""
from __future__ import annotations

from collections import defaultdict

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from persistence.competitors import CompetitorDailyHashtag, CompetitorPost
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
    return dict(since=span.first, until=span.last, days=span.days, competitors=measure(session, competitors, span))


def measure(session, competitors, span: figures.Range) -> list[dict]:
    if not competitors:
        return []
    ids = [c.id for c in competitors]
    daily = figures.daily_rows(session, competitors, span)
    summaries = {cid: figures.summarize(rows) for cid, rows in daily.items()}
    tags = _hashtags(session, ids, span)
    slots = _slots(session, ids, span)
    thresholds = {cid: summary.breakout_threshold for cid, summary in summaries.items()}
    breakouts = _breakouts(session, thresholds, span)
    found = []
    for competitor in competitors:
        summary = summaries[competitor.id]
        found.append(dict(
            competitor_id=competitor.id, name=competitor.name, posts=summary.posts, engagements=summary.engagements,
            **{name: summary.metric(name, span.days) for name in figures.METRICS},
            top_hashtags=tags.get(competitor.id, []), best_times=slots.get(competitor.id, []),
            breakout_threshold=None if thresholds[competitor.id] is None else round(thresholds[competitor.id], 4),
            breakout_posts=breakouts.get(competitor.id, []),
        ))
    return found


def _hashtags(session, ids, span) -> dict:
    rows = session.execute(
        select(CompetitorDailyHashtag.competitor_id, CompetitorDailyHashtag.hashtag,
               func.sum(CompetitorDailyHashtag.posts), func.sum(CompetitorDailyHashtag.engagements))
        .where(CompetitorDailyHashtag.competitor_id.in_(ids), CompetitorDailyHashtag.day >= span.first,
               CompetitorDailyHashtag.day <= span.last)
        .group_by(CompetitorDailyHashtag.competitor_id, CompetitorDailyHashtag.hashtag)
    )
    grouped: dict = defaultdict(list)
    for cid, tag, posts, engagements in rows:
        if posts:
            grouped[cid].append(dict(hashtag=tag, posts=int(posts), engagements=int(engagements or 0)))
    return {cid: sorted(entries, key=lambda e: (-e["posts"], -e["engagements"], e["hashtag"]))[:TOP_HASHTAGS]
            for cid, entries in grouped.items()}


def _slots(session, ids, span) -> dict:
    rows = session.execute(
        select(CompetitorPost.competitor_id, CompetitorPost.weekday, CompetitorPost.hour, func.count(),
               func.sum(CompetitorPost.engagements))
        .where(CompetitorPost.competitor_id.in_(ids), CompetitorPost.posted_at >= span.since,
               CompetitorPost.posted_at < span.until)
        .group_by(CompetitorPost.competitor_id, CompetitorPost.weekday, CompetitorPost.hour)
    )
    grouped: dict = defaultdict(list)
    for cid, weekday, hour, posts, engagements in rows:
        grouped[cid].append(dict(weekday=weekday, hour=hour, posts=int(posts),
                                 engagements_per_post=round(int(engagements or 0) / int(posts), 4)))
    return {cid: sorted(entries, key=lambda e: (-e["engagements_per_post"], -e["posts"], e["weekday"], e["hour"]))[:BEST_TIMES]
            for cid, entries in grouped.items()}


def _breakouts(session, thresholds: dict, span) -> dict:
    judged = [and_(CompetitorPost.competitor_id == cid, CompetitorPost.engagements > threshold)
              for cid, threshold in thresholds.items() if threshold is not None]
    if not judged:
        return {}
    rows = session.execute(
        select(CompetitorPost)
        .where(or_(*judged), CompetitorPost.posted_at >= span.since, CompetitorPost.posted_at < span.until)
        .order_by(CompetitorPost.competitor_id, CompetitorPost.engagements.desc(), CompetitorPost.posted_at.desc())
    ).scalars()
    grouped: dict = defaultdict(list)
    for post in rows:
        if len(grouped[post.competitor_id]) < BREAKOUTS:
            grouped[post.competitor_id].append(post)
    return grouped
