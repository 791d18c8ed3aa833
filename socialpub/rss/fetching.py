"""Fetching feeds: claiming the due ones, one fetch per feed on the queue, and what a
fetch does to the feed and its items.

The dispatcher (periodic) leases due active feeds and hands each to one `fetch_feed`
job; a fetch asked for through the API claims its feed the same way. A fetch goes
through the guarded outbound client with the validators of the last answer
(`If-None-Match`, `If-Modified-Since`): 304 touches no item. No transaction is held
while the feed's server takes its time. Then one transaction records the fetch: the
feed's state and lease, its new items (deduplicated by the items' unique key, so two
fetches racing add each once), each with an `rss.item.created` event, and, for an
auto feed, their posts.

What a fetch yields is bounded. It reads the document's newest 500 entries
(`parsing.MAX_ENTRIES`). Of those not seen before it adds the newest
`maxItemsPerFetch` (at most 50) as items, and an auto feed publishes them, oldest
first. The first fetch of an auto feed records the entries it reads as skipped
instead (at most 500): following a feed never floods the accounts with its backlog.
Entries past those 500 are never recorded; the newest date among them is kept
(`backlog_until`), and an entry dated at or before it that a later document shows
(its newer entries gone) is recorded as skipped, not published. Rows are inserted
`INSERT_CHUNK` at a time, well under the 65,535 parameters of one PostgreSQL
statement.

An auto feed's items are published in the recording transaction: storing an item,
creating its post (`posts.add_post`, due now) and starting its publication commit
together or not at all. Each item is published behind a savepoint: one the post
rules refuse (no connected account, too long) stays `new` and does not hold back the
others. A worker killed in the middle of a fetch leaves nothing of it (PostgreSQL
rolls the transaction back): no item is stored, so none is left `new` by the crash,
no post is made without its item being `published`, and the feed, still leased, is
due again when the lease runs out; its next fetch reads the same entries, still
unseen, and stores and publishes them then. That is what taking the items up again
is: the whole fetch is done again, not an item left half done. An item left `new`
(refused, stored while the feed was paused, or left by a version that committed
items before publishing them) is tried again by the following fetches (a 304 one
too), oldest first and at most `maxItemsPerFetch` of them each time, until it has
been tried `AUTO_PUBLISH_TRIES` times in all (an account reconnected in between lets
it through); then it waits for a person to publish or skip it, and no fetch tries
it again. Items that came in while the feed was in review mode are never published
by switching it to auto.

A failure at any step (refused address, timeout, size cap, an answer that is not a
feed, items the database refused, any unforeseen exception) is recorded in
`lastError`, and the lease is given back until the next interval; after
`FAILURES_BEFORE_ERROR` in a row the feed moves to `error` and is no longer fetched
until resumed. One feed's failure never stops the others: each is its own job.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from types import SimpleNamespace
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
from socialpub.rss.changes import RSS_ITEMS
from socialpub.rss.schemas import ItemSchema
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.rss")

FAILURES_BEFORE_ERROR = 5
# Items a fetch of an auto feed tries to publish before leaving it to a person.
AUTO_PUBLISH_TRIES = 3
# Rows per INSERT (14 columns each) and keys per lookup.
INSERT_CHUNK = 200
LOOKUP_CHUNK = 500
REFUSALS_BEFORE_GIVING_UP = 5
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
    try:
        with database.transaction() as session:
            return _record(session, parsed_id, token, fetched)
    except Exception as exc:  # noqa: BLE001 - nothing of the fetch was kept: recorded as its failure
        logger.error("feed fetch could not be recorded", exc_info=True, extra={"feed_id": str(parsed_id)})
        message = f"The feed's items could not be stored: {_reason(exc)}"
        with database.transaction() as session:
            return _record(session, parsed_id, token, Fetched(fetched.status, error=message))


def _reason(exc: Exception) -> str:
    """What went wrong, in one line: the database's own words for a statement it
    refused (not the statement and its values)."""
    cause = getattr(exc, "orig", None) or exc
    first_line = (str(cause).strip().splitlines() or [""])[0]
    return f"{cause.__class__.__name__}: {first_line}"[:500] if first_line else cause.__class__.__name__


def _record(session, feed_id, token: str, fetched: Fetched) -> str:
    """The fetch's outcome on the feed, its new items and an auto feed's posts."""
    feed = session.execute(
        claims.lock_rows(session, select(RssFeed).where(RssFeed.id == feed_id))
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
    priming = feed.mode == FeedMode.AUTO and feed.primed_at is None
    new_ids = []
    if fetched.status != 304:
        feed.etag = parsing.storable(fetched.etag)[:500] if fetched.etag else None
        feed.last_modified = parsing.storable(fetched.last_modified)[:100] if fetched.last_modified else None
        if not feed.title_given and fetched.feed.title:
            feed.title = fetched.feed.title
        if priming:
            feed.backlog_until = fetched.feed.unread_until
        new_ids = _record_entries(session, feed, fetched.feed.entries, now, priming=priming)
        feed.primed_at = feed.primed_at or now
    if feed.mode == FeedMode.AUTO and not priming and feed.status == FeedStatus.ACTIVE:
        # Items left waiting are taken up by an unchanged feed's fetch (304) too.
        _publish_new(session, feed, new_ids)
    return "not_modified" if fetched.status == 304 else "fetched"


def _record_failure(feed: RssFeed, message: str, now) -> None:
    feed.last_error = parsing.storable(message)[:2000]
    feed.consecutive_failures += 1
    if feed.consecutive_failures >= FAILURES_BEFORE_ERROR and feed.status == FeedStatus.ACTIVE:
        feed.status = FeedStatus.ERROR
        logger.warning("feed moved to error after repeated failures", extra={"feed_id": str(feed.id)})


def _chunks(values: list, size: int):
    for start in range(0, len(values), size):
        yield values[start:start + size]


def _record_entries(session, feed: RssFeed, entries: list[parsing.Entry], now, *, priming: bool) -> list:
    """Inserts the entries (the newest first) not seen before as items, with their
    events; returns the ids of the new `new` items, oldest first. The first fetch of
    an auto feed records them all, as skipped; any other takes the newest
    `max_items_per_fetch` unseen ones, and an auto feed's backlog (dated at or before
    `backlog_until`) as skipped. Never more than the newest `parsing.MAX_ENTRIES`."""
    unique: dict[str, parsing.Entry] = {}
    for entry in entries[: parsing.MAX_ENTRIES]:
        unique.setdefault(entry.dedupe_key, entry)
    if not unique:
        return []
    known = set()
    for keys in _chunks(list(unique), LOOKUP_CHUNK):
        known.update(session.execute(
            select(RssItem.dedupe_key).where(RssItem.feed_id == feed.id, RssItem.dedupe_key.in_(keys))
        ).scalars())
    unseen = [entry for key, entry in unique.items() if key not in known]
    if priming:
        skipped, taken = unseen, []
    else:
        backlog = feed.backlog_until if feed.mode == FeedMode.AUTO else None
        skipped = [entry for entry in unseen if backlog and entry.published_at and entry.published_at <= backlog]
        backlog_keys = {entry.dedupe_key for entry in skipped}
        taken = [entry for entry in unseen if entry.dedupe_key not in backlog_keys][: feed.max_items_per_fetch]
    # Oldest first (created_at keeps that order within one fetch).
    ordered = [(entry, ItemStatus.SKIPPED) for entry in reversed(skipped)]
    ordered += [(entry, ItemStatus.NEW) for entry in reversed(taken)]
    ordered.sort(key=lambda pair: pair[0].published_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    rows = []
    for offset, (entry, status) in enumerate(ordered):
        created = now + dt.timedelta(microseconds=offset)
        rows.append(dict(
            id=uuid.uuid4(), workspace_id=feed.workspace_id, livemode=feed.livemode, created_at=created,
            updated_at=created, feed_id=feed.id, dedupe_key=entry.dedupe_key, guid=entry.guid, title=entry.title,
            link=entry.link, summary=entry.summary, author=entry.author, published_at=entry.published_at,
            status=status, publish_attempts=0,
        ))
    inserted = set()
    for chunk in _chunks(rows, INSERT_CHUNK):
        inserted.update(_insert(session, feed, chunk))
    if inserted:
        scope = TenantScope.for_job(session, feed.workspace_id, feed.livemode, job=f"rss feed {feed.id}")
        stored = [SimpleNamespace(**row) for row in rows if row["id"] in inserted]
        RSS_ITEMS.announce("created", scope=scope, record=stored)
    created_ids = []
    for row in rows:
        if row["id"] not in inserted:
            continue
        if row["status"] == ItemStatus.NEW:
            created_ids.append(row["id"])
        events.record(session, workspace_id=feed.workspace_id, livemode=feed.livemode, type="rss.item.created",
                      data={"item": _item_schema.dump({**row, "post_id": None})})
    return created_ids


def _insert(session, feed: RssFeed, rows: list[dict]) -> list:
    """Inserts `rows` in one statement, behind a savepoint; when the database refuses
    it, one row at a time, leaving out those it refuses (logged): one bad entry does
    not sink the others. When it refuses the first REFUSALS_BEFORE_GIVING_UP rows in
    a row, what it refuses is not an entry (a timeout, a lost connection): that fails
    the fetch."""
    try:
        with session.begin_nested():
            return claims.insert_new(session, RssItem, rows, unique=["feed_id", "dedupe_key"], returning=RssItem.id)
    except Exception:  # noqa: BLE001 - the rows are tried one by one below
        if len(rows) == 1:
            raise
    inserted, refused = [], 0
    for row in rows:
        try:
            inserted.extend(_insert(session, feed, [row]))
        except Exception as exc:  # noqa: BLE001 - this entry only
            refused += 1
            if not inserted and refused >= REFUSALS_BEFORE_GIVING_UP:
                raise
            logger.warning("feed entry could not be stored: %s", _reason(exc),
                           extra={"feed_id": str(feed.id), "dedupe_key": row["dedupe_key"]})
    return inserted


def _publish_new(session, feed: RssFeed, new_ids: list) -> None:
    """Publishes an auto feed's items now, in the caller's transaction, oldest first:
    those left `new` by earlier fetches and tried fewer than AUTO_PUBLISH_TRIES times
    (at most `max_items_per_fetch`), then the new ones. Each behind a savepoint: an
    item the post rules refuse stays `new`, its try counted, and the others go on."""
    scope = TenantScope.for_job(session, feed.workspace_id, feed.livemode, job=f"rss feed {feed.id}")
    criteria = [
        RssItem.feed_id == feed.id, RssItem.status == ItemStatus.NEW, RssItem.publish_attempts < AUTO_PUBLISH_TRIES,
        # Read since the feed was last primed: not items that came in while it was in
        # review mode, which are for a person.
        RssItem.created_at >= feed.primed_at,
    ]
    if new_ids:
        criteria.append(RssItem.id.not_in(new_ids))
    waiting = scope.select(RssItem, *criteria).order_by(RssItem.created_at, RssItem.id).limit(feed.max_items_per_fetch)
    items = list(session.execute(claims.lock_rows(session, waiting, skip_locked=True, of=RssItem)).scalars())
    if new_ids:
        items += session.execute(
            scope.select(RssItem, RssItem.id.in_(new_ids)).order_by(RssItem.created_at, RssItem.id)
        ).scalars().all()
    for item in items:
        item.publish_attempts += 1
        try:
            with session.begin_nested():
                rss_items.publish(scope, feed, item, mode="now")
        except ApiError as exc:
            logger.warning("auto feed item left for review: %s", exc.message,
                           extra={"feed_id": str(feed.id), "item_id": str(item.id)})
        except Exception:  # noqa: BLE001 - this item only; a broken transaction fails the fetch at its end
            logger.error("auto feed item could not be published", exc_info=True,
                         extra={"feed_id": str(feed.id), "item_id": str(item.id)})
