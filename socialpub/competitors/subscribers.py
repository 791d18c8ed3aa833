"""Competitor tracking's reactions to listening (socialpub.listening.changes):

- every ingest of signals (SIGNALS, `ingested`): the new signals one of a tracked
  competitor's handles wrote (author and platform) are stored as that competitor's
  posts (`source` "listening", without counts until its profile is read) and
  counted in its daily figures; one indexed look-up of the ingest's authors, and
  nothing more when none is a competitor's;
- a report built (REPORTS, `built`): its share of voice is filled from its
  monitor's signals of its window (socialpub.competitors.share), in the report's
  transaction.
"""
from __future__ import annotations

from collections import defaultdict

from sqlalchemy import select

from persistence.competitors import Competitor, CompetitorHandle
from socialpub import clock
from socialpub.announcements import Change
from socialpub.competitors.ingest import IncomingPost, store_posts
from socialpub.handles import handle_key
from socialpub.competitors.share import share_of_voice
from socialpub.connectors.profiles import hashtags_of
from socialpub.listening.changes import REPORTS, SIGNALS


@SIGNALS.subscribe("ingested")
def competitor_signals(change: Change) -> None:
    authored = [signal for signal in change.records if signal.author]
    if not authored:
        return
    scope, session = change.scope, change.session
    keys = {handle_key(signal.author) for signal in authored}
    handles = {
        (row.livemode, row.platform, row.handle_key): row for row in session.execute(
            select(CompetitorHandle).where(*scope.criteria(CompetitorHandle), CompetitorHandle.handle_key.in_(keys))
        ).scalars()
    }
    if not handles:
        return
    by_competitor: dict = defaultdict(list)
    for signal in authored:
        row = handles.get((signal.livemode, signal.platform, handle_key(signal.author)))
        if row is not None:
            by_competitor[row.competitor_id].append(IncomingPost(
                platform=signal.platform, external_id=signal.external_id, handle=row.handle_key, text=signal.content,
                url=signal.url, posted_at=signal.posted_at, hashtags=hashtags_of(signal.content), counted=False,
            ))
    now = clock.now()
    for competitor_id, posts in sorted(by_competitor.items(), key=lambda item: str(item[0])):
        competitor = session.get(Competitor, competitor_id)
        if competitor is not None:
            store_posts(session, competitor=competitor, posts=posts, followers={}, source="listening", now=now)


@REPORTS.subscribe("built")
def fill_share_of_voice(change: Change) -> None:
    report = change.record
    report.share_of_voice = share_of_voice(change.scope, monitor_id=change.details["monitor_id"],
                                           since=change.details["since"], until=change.details["until"])
