"""Fetching feeds: claiming the due ones, one fetch per feed on the queue, and what a
fetch does to the feed and its items.

The dispatcher (periodic) leases due active feeds and hands each to one `fetch_feed`
job; a fetch asked for through the API claims its feed the same way. A fetch goes
through the guarded outbound client with the validators of the last answer
(`If-None-Match`, `If-Modified-Since`): 304 touches no item. No transaction is held
while the feed's server takes its time. New entries become items (deduplicated by
the items' unique key, so two fetches racing add each once), each with an
`rss.item.created` event in the same transaction.

At most `maxItemsPerFetch` unseen entries, the newest, are taken per fetch; an auto
feed then publishes them oldest first. The first successful fetch of an auto feed
records every entry already in the feed as skipped: following a feed never floods
the accounts with its backlog.

A failure (refused address, timeout, size cap, an answer that is not a feed) is
recorded in `lastError`; after `FAILURES_BEFORE_ERROR` in a row the feed moves to
`error` and is no longer fetched until resumed. One feed's failure never stops the
others: each is its own job, and an unforeseen exception is recorded as a failure.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from typing import Callable

import httpx
from sqlalchemy import and_, or_, select

from persistence.rss import FeedMode, FeedStatus, ItemStatus, RssFeed, RssItem
from socialpub import claims, clock
from socialpub.errors import ApiError
from socialpub.events import service as events
from socialpub.outbound import GuardedClient, OutboundFailed, OutboundRefused, OutboundTimedOut
from socialpub.rss import items as rss_items
from socialpub.rss import parsing
from socialpub.rss.schemas import ItemSchema
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.rss")

FAILURES_BEFORE_ERROR = 5
_item_schema = ItemSchema()


def _client(settings) -> GuardedClient:
    return GuardedClient(
        timeout=httpx.Timeout(settings.rss_timeout_seconds, connect=min(5.0, settings.rss_timeout_seconds)),
        total_timeout=settings.rss_timeout_seconds,
        max_bytes=settings.rss_max_bytes,
    )


def _free(now):
    return or_(RssFeed.lease_until.is_(None), RssFeed.lease_until < now)


def _due(now):
    return and_(RssFeed.status == FeedStatus.ACTIVE, RssFeed.next_fetch_at <= now, _free(now))


def claim_feed(session, feed_id, *, now, settings) -> str | None:
    """Leases one feed for a fetch asked for now; None when a fetch already holds it."""
    token = str(uuid.uuid4())
    claimed = claims.claim(
        session, RssFeed, and_(RssFeed.id == feed_id, _free(now)),
        values={"lease_until": now + dt.timedelta(seconds=settings.rss_lease_seconds), "claim_token": token},
        of=RssFeed,
    )
    return token if claimed else None


def dispatch_due_feeds(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each due active feed to one `run(feed_id, token)` job; returns how many."""
    now = now or clock.now()
    token = str(uuid.uuid4())
    with database.transaction() as session:
        claimed = claims.claim(
            session, RssFeed, _due(now),
            values={"lease_until": now + dt.timedelta(seconds=settings.rss_lease_seconds), "claim_token": token},
            order_by=RssFeed.next_fetch_at, limit=settings.rss_batch_size, of=RssFeed,
        )
    return claims.hand_out(
        database=database, queue=queue, run=run, model=RssFeed, claimed=claimed, token=token, job_name="rss-feed"
    )


@dataclass
class Fetched:
    status: int
    feed: parsing.Feed | None = None
    etag: str | None = None
    last_modified: str | None = None
    error: str | None = None


def _download(client: GuardedClient, url: str, etag: str | None, last_modified: str | None) -> Fetched:
    headers = {"Accept": "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, "
                         "text/xml;q=0.9, */*;q=0.1"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    try:
        response = client.get(url, headers=headers)
    except OutboundRefused as exc:
        return Fetched(0, error=f"The feed's URL was refused: {exc}")
    except OutboundTimedOut as exc:
        return Fetched(0, error=f"The feed's server did not answer in time ({exc}).")
    except OutboundFailed as exc:
        return Fetched(0, error=f"The feed could not be fetched: {exc}")
    if response.status_code == 304:
        return Fetched(304, etag=etag, last_modified=last_modified)
    if not 200 <= response.status_code < 300:
        return Fetched(response.status_code, error=f"The feed's server answered {response.status_code}.")
    try:
        feed = parsing.parse(response.content, content_type=response.headers.get("content-type"))
    except parsing.FeedInvalid as exc:
        return Fetched(response.status_code, error=str(exc))
    return Fetched(response.status_code, feed=feed, etag=(response.headers.get("etag") or None),
                   last_modified=(response.headers.get("last-modified") or None))


def fetch_feed(*, database, feed_id, token, settings, client: GuardedClient | None = None) -> str:
    """One fetch of a feed leased with `token`; returns what happened ("not_modified",
    "fetched", "failed", or "lost" when the lease is no longer ours)."""
    client = client or _client(settings)
    parsed_id = parse_id(feed_id)
    with database.transaction() as session:
        feed = session.get(RssFeed, parsed_id)
        if feed is None or feed.claim_token != token:
            return "lost"
        url, etag, last_modified = feed.url, feed.etag, feed.last_modified
    try:
        fetched = _download(client, url, etag, last_modified)
    except Exception as exc:  # noqa: BLE001 - recorded as this feed's failure; the others go on
        logger.error("feed fetch failed unexpectedly", exc_info=True, extra={"feed_id": str(parsed_id)})
        fetched = Fetched(0, error=f"The feed could not be read ({exc.__class__.__name__}).")
    with database.transaction() as session:
        feed = session.execute(
            claims.lock_rows(session, select(RssFeed).where(RssFeed.id == parsed_id))
        ).scalar_one_or_none()
        if feed is None or feed.claim_token != token:
            return "lost"
        now = clock.now()
        feed.lease_until = feed.claim_token = None
        feed.next_fetch_at = now + dt.timedelta(minutes=feed.fetch_interval_minutes)
        if fetched.error is not None:
            _record_failure(feed, fetched.error, now)
            return "failed"
        feed.last_fetched_at = now
        feed.last_error = None
        feed.consecutive_failures = 0
        if fetched.status == 304:
            return "not_modified"
        feed.etag = fetched.etag[:500] if fetched.etag else None
        feed.last_modified = fetched.last_modified[:100] if fetched.last_modified else None
        if not feed.title_given and fetched.feed.title:
            feed.title = fetched.feed.title
        new_ids = _record_entries(session, feed, fetched.feed.entries, now)
        to_publish = []
        if feed.mode == FeedMode.AUTO and feed.primed_at is not None:
            to_publish = new_ids
        feed.primed_at = feed.primed_at or now
        feed_snapshot = (feed.id, feed.workspace_id, feed.livemode)
    if to_publish:
        _publish_new(database, feed_snapshot, to_publish)
    return "fetched"


def _record_failure(feed: RssFeed, message: str, now) -> None:
    feed.last_error = message[:2000]
    feed.consecutive_failures += 1
    if feed.consecutive_failures >= FAILURES_BEFORE_ERROR and feed.status == FeedStatus.ACTIVE:
        feed.status = FeedStatus.ERROR
        logger.warning("feed moved to error after repeated failures", extra={"feed_id": str(feed.id)})


def _record_entries(session, feed: RssFeed, entries: list[parsing.Entry], now) -> list:
    """Inserts the entries not seen before as items, with their events; returns the
    new items' ids, oldest first. The first fetch of an auto feed records them all, as
    skipped; any other fetch takes the newest `max_items_per_fetch` unseen ones."""
    unique: dict[str, parsing.Entry] = {}
    for entry in entries:
        unique.setdefault(entry.dedupe_key, entry)
    if not unique:
        return []
    known = set(session.execute(
        select(RssItem.dedupe_key).where(RssItem.feed_id == feed.id, RssItem.dedupe_key.in_(list(unique)))
    ).scalars())
    unseen = [entry for key, entry in unique.items() if key not in known]
    priming_auto = feed.mode == FeedMode.AUTO and feed.primed_at is None
    if not priming_auto:
        # The newest first (by date where every entry has one, else in the document's
        # order, newest first as feeds list them); the rest are taken by later fetches.
        if all(entry.published_at for entry in unseen):
            unseen = sorted(unseen, key=lambda entry: entry.published_at, reverse=True)
        unseen = unseen[: feed.max_items_per_fetch]
    # Oldest first: by date where entries have one, else the reverse of the document's order.
    ordered = list(reversed(unseen))
    ordered.sort(key=lambda entry: entry.published_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    status = ItemStatus.SKIPPED if priming_auto else ItemStatus.NEW
    rows = []
    for offset, entry in enumerate(ordered):
        # created_at keeps the oldest-first order within one fetch.
        created = now + dt.timedelta(microseconds=offset)
        rows.append(dict(
            id=uuid.uuid4(), workspace_id=feed.workspace_id, livemode=feed.livemode, created_at=created,
            updated_at=created, feed_id=feed.id, dedupe_key=entry.dedupe_key, guid=entry.guid, title=entry.title,
            link=entry.link, summary=entry.summary, author=entry.author, published_at=entry.published_at,
            status=status,
        ))
    inserted = set(claims.insert_new(session, RssItem, rows, unique=["feed_id", "dedupe_key"], returning=RssItem.id))
    created_ids = []
    for row in rows:
        if row["id"] not in inserted:
            continue
        created_ids.append(row["id"])
        events.record(session, workspace_id=feed.workspace_id, livemode=feed.livemode, type="rss.item.created",
                      data={"item": _item_schema.dump({**row, "post_id": None})})
    return created_ids


def _publish_new(database, feed_snapshot, item_ids) -> None:
    """Publishes an auto feed's new items now, oldest first, each in its own
    transaction: one refused item (no connected account, too long) stays `new` for a
    person to handle and does not hold back the others."""
    feed_id, workspace_id, livemode = feed_snapshot
    for item_id in item_ids:
        try:
            with database.transaction() as session:
                scope = TenantScope.for_job(session, workspace_id, livemode, job=f"rss feed {feed_id}")
                feed = session.get(RssFeed, feed_id)
                if feed is None or feed.mode != FeedMode.AUTO or feed.status != FeedStatus.ACTIVE:
                    return
                item = scope.get(RssItem, item_id, resource="item", for_update=True)
                if item.status != ItemStatus.NEW:
                    continue
                rss_items.publish(scope, feed, item, mode="now")
        except ApiError as exc:
            logger.warning("auto feed item left for review: %s", exc.message,
                           extra={"feed_id": str(feed_id), "item_id": str(item_id)})
