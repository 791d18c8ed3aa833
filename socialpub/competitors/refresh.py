"""Competitors read on their own: the periodic refresh of their public profiles.

The dispatcher (periodic, `dispatch_refreshes`) leases the competitors due a refresh
(`next_refresh_at` passed, or never refreshed) and hands each to one
`refresh_competitor` job (socialpub.leased_reads, the loop listening polls with).
A refresh:

1. reads the competitor's handles that can be read: Mastodon and Bluesky live
   (socialpub.connectors.profiles), every handle in test mode (the sandbox's
   deterministic profiles, never a platform);
2. reads each, with no transaction open, through the guarded outbound client, from
   its own cursor; a handle that fails does not stop the others;
3. in one transaction, while the lease is still the refresh's: stores the posts read
   (socialpub.competitors.ingest: new ones added, known ones given their new counts,
   the daily figures kept), each handle's followers and cursor (a failing handle
   keeps its cursor and records its error), the competitor's followers (the sum of
   its handles' known followers) as the day's reading, and when it is due again; a
   change of its followers or error is announced (`updated`).
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import and_, or_, select

from persistence.competitors import Competitor, CompetitorHandle
from socialpub import clock, leased_reads
from socialpub.competitors.changes import COMPETITORS
from socialpub.competitors.ingest import IncomingPost, record_followers, store_posts
from socialpub.connectors import profiles
from socialpub.errors import ApiError
from socialpub.outbound import GuardedClient
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.competitors")

REFRESHES = leased_reads.LeasedReads(Competitor, "competitor-refresh", logger, "competitor refresh", "competitor_id")


def _due(now):
    return and_(or_(Competitor.next_refresh_at.is_(None), Competitor.next_refresh_at <= now), REFRESHES.free(now))


def dispatch_refreshes(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each competitor due a refresh to one `run(competitor_id, token)` job."""
    now = now or clock.now()
    return REFRESHES.dispatch(database=database, queue=queue, run=run, due=_due(now),
                              order_by=Competitor.next_refresh_at.asc().nulls_first(),
                              lease_seconds=settings.competitors_refresh_lease_seconds,
                              batch_size=settings.competitors_refresh_batch_size, now=now)


@dataclass
class Reading(leased_reads.SourceRead):
    handle_id: uuid.UUID
    platform: str
    handle: str
    key: str
    posts: list = field(default_factory=list)
    followers: int | None = None


def client_for(settings) -> GuardedClient:
    return leased_reads.client_for(settings.competitors_refresh_timeout_seconds)


def refresh_competitor(*, database, settings, competitor_id, token: str, profiles_for: Callable = profiles.profiles_for,
                       client: GuardedClient | None = None) -> dict:
    """One refresh of a competitor leased with `token`: what it read and stored, or
    {"status": "lost"} when the lease is no longer the refresh's."""
    livemode = None

    def plan(session, competitor) -> list[Reading]:
        nonlocal livemode
        livemode = competitor.livemode
        return [
            Reading(row.id, row.platform, row.handle, row.handle_key, cursor=row.cursor)
            for row in session.execute(
                select(CompetitorHandle).where(CompetitorHandle.competitor_id == competitor.id)
                .order_by(CompetitorHandle.platform, CompetitorHandle.handle_key)
            ).scalars()
            if not livemode or row.platform in profiles.READ_PLATFORMS
        ]

    def read(reading: Reading) -> None:
        nonlocal client
        client = client or client_for(settings)
        _read(reading, profiles_for, client, livemode, settings)

    def record(session, competitor, planned, failure) -> dict:
        return _record(session, competitor, planned if failure is None else [], settings, failure=failure)

    return REFRESHES.run(database=database, record_id=competitor_id, token=token, plan=plan, read=read, record=record,
                         failure_of=lambda exc: f"What was read could not be stored ({exc.__class__.__name__}).")


def _read(reading: Reading, profiles_for, client, livemode: bool, settings) -> None:
    found = REFRESHES.read(
        reading,
        lambda: profiles_for(reading.platform, livemode=livemode, client=client,
                             mastodon_url=settings.competitors_mastodon_url,
                             bluesky_url=settings.competitors_bluesky_url).read_profile(
            handle=reading.handle, cursor=reading.cursor),
        unexpected="The profile could not be read ({error}).", what="competitor profile read",
        extra={"handle_id": str(reading.handle_id)},
    )
    if found is None:
        return
    reading.followers = found.followers
    reading.posts = [
        IncomingPost(platform=reading.platform, external_id=post.external_id, handle=reading.key, text=post.text,
                     url=post.url, posted_at=post.posted_at, likes=post.likes, replies=post.replies,
                     reposts=post.reposts, hashtags=post.hashtags)
        for post in found.posts
    ]


def _record(session, competitor: Competitor, readings: list[Reading], settings, *, failure: str | None = None) -> dict:
    now = clock.now()
    before = (competitor.followers, competitor.last_error)
    counts = {"status": "refreshed", "handles": len(readings), "failed": 0, "added": 0, "updated": 0}
    handles = {row.id: row for row in session.execute(
        select(CompetitorHandle).where(CompetitorHandle.competitor_id == competitor.id)).scalars()}
    for reading in readings:
        row = handles.get(reading.handle_id)
        if row is None:
            continue
        if leased_reads.settle(row, reading):
            counts["failed"] += 1
            continue
        row.followers = reading.followers
    followers_now = {row.handle_key: row.followers for row in handles.values()}
    for reading in readings:
        if reading.error is None and reading.posts:
            added, updated = store_posts(session, competitor=competitor, posts=reading.posts, followers=followers_now,
                                         source="profile", now=now)
            counts["added"] += added
            counts["updated"] += updated
    known = [row.followers for row in handles.values() if row.followers is not None]
    if known and failure is None:
        competitor.followers = sum(known)
        record_followers(session, competitor_id=competitor.id, day=now.date(), followers=competitor.followers)
    errors = [f"{row.platform} {row.handle}: {row.last_error}" for row in
              sorted(handles.values(), key=lambda row: (row.platform, row.handle_key)) if row.last_error]
    leased_reads.finish(competitor, now=now, errors=errors, failure=failure,
                        interval_seconds=settings.competitors_refresh_interval_seconds,
                        ran_at="last_refreshed_at", due_at="next_refresh_at")
    if (competitor.followers, competitor.last_error) != before:
        scope = TenantScope.for_job(session, competitor.workspace_id, competitor.livemode,
                                    job=f"competitor refresh {competitor.id}")
        COMPETITORS.announce("updated", scope=scope, record=competitor)
    return counts


def refresh_now(*, database, settings, competitor_id, **options) -> dict:
    """Refreshes one competitor at once (the operator's `refresh`): claimed as the
    dispatcher claims it, then read in this process; 409 while a refresh holds it."""
    parsed = parse_id(competitor_id)
    now = clock.now()
    with database.transaction() as session:
        if parsed is None or session.get(Competitor, parsed) is None:
            raise ApiError.not_found("competitor", competitor_id)
        token, claimed = REFRESHES.lease(session, and_(Competitor.id == parsed, REFRESHES.free(now)),
                                         lease_seconds=settings.competitors_refresh_lease_seconds, now=now)
    if not claimed:
        raise ApiError.conflict("This competitor is being refreshed; try again once that refresh ends.")
    return refresh_competitor(database=database, settings=settings, competitor_id=parsed, token=token, **options)
