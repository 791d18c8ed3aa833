"""Competitors read on their own: the periodic refresh of their public profiles.

The dispatcher (periodic, `dispatch_refreshes`) leases the competitors due a refresh
(`next_refresh_at` passed, or never refreshed) and hands each to one
`refresh_competitor` job (`claims.hand_out`). A refresh:

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

import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field
from typing import Callable

import httpx
from sqlalchemy import and_, or_, select

from persistence.competitors import Competitor, CompetitorHandle
from socialpub import claims, clock
from socialpub.competitors.changes import COMPETITORS
from socialpub.competitors.ingest import IncomingPost, record_followers, store_posts
from socialpub.connectors import profiles
from socialpub.connectors.base import PlatformError
from socialpub.errors import ApiError
from socialpub.outbound import GuardedClient
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.competitors")

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
JOB_NAME = "competitor-refresh"


def _free(now):
    return or_(Competitor.lease_until.is_(None), Competitor.lease_until < now)


def _due(now):
    return and_(or_(Competitor.next_refresh_at.is_(None), Competitor.next_refresh_at <= now), _free(now))


def dispatch_refreshes(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each competitor due a refresh to one `run(competitor_id, token)` job."""
    now = now or clock.now()
    token = str(uuid.uuid4())
    with database.transaction() as session:
        claimed = claims.claim(
            session, Competitor, _due(now),
            values={"lease_until": now + dt.timedelta(seconds=settings.competitors_refresh_lease_seconds),
                    "claim_token": token},
            order_by=Competitor.next_refresh_at.asc().nulls_first(), limit=settings.competitors_refresh_batch_size,
            of=Competitor,
        )
    return claims.hand_out(database=database, queue=queue, run=run, model=Competitor, claimed=claimed, token=token,
                           job_name=JOB_NAME)


@dataclass
class Reading:
    handle_id: uuid.UUID
    platform: str
    handle: str
    key: str
    posts: list = field(default_factory=list)
    followers: int | None = None
    cursor: str | None = None
    error: str | None = None


def client_for(settings) -> GuardedClient:
    timeout = settings.competitors_refresh_timeout_seconds
    return GuardedClient(timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)), total_timeout=timeout,
                         max_bytes=MAX_RESPONSE_BYTES)


def refresh_competitor(*, database, settings, competitor_id, token: str, profiles_for: Callable = profiles.profiles_for,
                       client: GuardedClient | None = None) -> dict:
    """One refresh of a competitor leased with `token`: what it read and stored, or
    {"status": "lost"} when the lease is no longer the refresh's."""
    parsed = parse_id(competitor_id)
    with database.transaction() as session:
        competitor = session.get(Competitor, parsed)
        if competitor is None or competitor.claim_token != token:
            return {"status": "lost"}
        livemode = competitor.livemode
        planned = [
            Reading(row.id, row.platform, row.handle, row.handle_key, cursor=row.cursor)
            for row in session.execute(
                select(CompetitorHandle).where(CompetitorHandle.competitor_id == parsed)
                .order_by(CompetitorHandle.platform, CompetitorHandle.handle_key)
            ).scalars()
            if not livemode or row.platform in profiles.READ_PLATFORMS
        ]
    client = client or client_for(settings)
    for reading in planned:
        _read(reading, profiles_for, client, livemode, settings)
    try:
        with database.transaction() as session:
            return _record(session, parsed, token, planned, settings)
    except Exception as exc:  # noqa: BLE001 - nothing of it was kept: recorded as the refresh's failure
        logger.error("competitor refresh could not be recorded", exc_info=True, extra={"competitor_id": str(parsed)})
        with database.transaction() as session:
            return _record(session, parsed, token, [], settings, failure=f"What was read could not be stored ({exc.__class__.__name__}).")


def _read(reading: Reading, profiles_for, client, livemode: bool, settings) -> None:
    try:
        found = profiles_for(reading.platform, livemode=livemode, client=client,
                             mastodon_url=settings.competitors_mastodon_url,
                             bluesky_url=settings.competitors_bluesky_url).read_profile(
            handle=reading.handle, cursor=reading.cursor)
    except PlatformError as exc:
        reading.error = exc.message
        return
    except Exception as exc:  # noqa: BLE001 - this handle's failure; the others go on
        logger.error("competitor profile read failed unexpectedly", exc_info=True, extra={"handle_id": str(reading.handle_id)})
        reading.error = f"The profile could not be read ({exc.__class__.__name__})."
        return
    reading.followers = found.followers
    reading.cursor = found.cursor if found.cursor is not None else reading.cursor
    reading.posts = [
        IncomingPost(platform=reading.platform, external_id=post.external_id, handle=reading.key, text=post.text,
                     url=post.url, posted_at=post.posted_at, likes=post.likes, replies=post.replies,
                     reposts=post.reposts, hashtags=post.hashtags)
        for post in found.posts
    ]


def _record(session, competitor_id, token: str, readings: list[Reading], settings, *, failure: str | None = None) -> dict:
    now = clock.now()
    competitor = session.execute(
        claims.lock_rows(session, select(Competitor).where(Competitor.id == competitor_id))
    ).scalar_one_or_none()
    if competitor is None or competitor.claim_token != token:
        return {"status": "lost"}
    before = (competitor.followers, competitor.last_error)
    counts = {"status": "refreshed", "handles": len(readings), "failed": 0, "added": 0, "updated": 0}
    handles = {row.id: row for row in session.execute(
        select(CompetitorHandle).where(CompetitorHandle.competitor_id == competitor.id)).scalars()}
    for reading in readings:
        row = handles.get(reading.handle_id)
        if row is None:
            continue
        if reading.error is not None:
            counts["failed"] += 1
            row.last_error = reading.error[:2000]
            continue
        row.followers, row.last_error = reading.followers, None
        row.cursor = reading.cursor[:500] if reading.cursor else row.cursor
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
    competitor.last_refreshed_at = now
    competitor.last_error = failure or ("; ".join(errors)[:4000] if errors else None)
    competitor.next_refresh_at = now + dt.timedelta(seconds=settings.competitors_refresh_interval_seconds)
    competitor.lease_until = competitor.claim_token = None
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
    token = str(uuid.uuid4())
    with database.transaction() as session:
        if parsed is None or session.get(Competitor, parsed) is None:
            raise ApiError.not_found("competitor", competitor_id)
        claimed = claims.claim(
            session, Competitor, and_(Competitor.id == parsed, _free(now)),
            values={"lease_until": now + dt.timedelta(seconds=settings.competitors_refresh_lease_seconds),
                    "claim_token": token}, of=Competitor,
        )
    if not claimed:
        raise ApiError.conflict("This competitor is being refreshed; try again once that refresh ends.")
    return refresh_competitor(database=database, settings=settings, competitor_id=parsed, token=token, **options)
