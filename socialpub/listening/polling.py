"""Monitors listening on their own: the periodic poll of the platforms' public search.

The dispatcher (periodic, `dispatch_polls`) leases the enabled monitors due a poll
(`next_poll_at` passed, or never polled) and hands each to one `poll_monitor` job
(socialpub.leased_reads, the loop competitors refresh with). A poll:

1. reads the monitor and its sources (`sources.sources_of`: the searches of its
   keywords on Bluesky and on Mastodon's hashtag timelines; the sandbox's stream in
   test mode), adding the ones it lacks and dropping those it no longer has, and
   picks at most SOCIALPUB_LISTENING_POLL_SOURCES of those not paused, the least
   recently searched first;
2. searches each, with no transaction open, through the guarded outbound client
   (socialpub.connectors.search), each from its own cursor; a source that fails
   does not stop the others;
3. in one transaction, while the lease is still the poll's: ingests what matched
   the monitor through listening's one ingest (`signals.ingest`, acting as
   `listening monitor <id>`: deduplicated by platform and external id, scored,
   matched against every enabled monitor, counted, announced), moves each searched
   source's cursor on, and records the poll on the monitor (`last_polled_at`,
   `last_error`: each failing source and its error) and when it is due again.

A source that failed is paused (`paused_until`: the poll interval, doubling with
each failure in a row, at most MAX_PAUSE, or the platform's Retry-After) while the
monitor's other sources go on; its cursor stays where it was, so what it missed is
read when it answers again. A poll that could not store what it found keeps every
cursor: the next poll reads the same posts again, and the ingest takes each once.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import and_, delete, or_, select

from persistence.listening import ListeningMonitor, ListeningSource
from socialpub import claims, clock, leased_reads
from socialpub.connectors import search
from socialpub.listening import matching, signals
from socialpub.listening.sources import SourceKey, language_of, signal_fields, sources_of
from socialpub.outbound import GuardedClient
from socialpub.tenancy import TenantScope

logger = logging.getLogger("socialpub.listening")

MAX_PAUSE = dt.timedelta(hours=6)

POLLS = leased_reads.LeasedReads(ListeningMonitor, "listening-monitor", logger, "listening poll", "monitor_id")


def _due(now):
    return and_(ListeningMonitor.enabled.is_(True),
                or_(ListeningMonitor.next_poll_at.is_(None), ListeningMonitor.next_poll_at <= now), POLLS.free(now))


def dispatch_polls(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each enabled monitor due a poll to one `run(monitor_id, token)` job."""
    now = now or clock.now()
    return POLLS.dispatch(database=database, queue=queue, run=run, due=_due(now),
                          order_by=ListeningMonitor.next_poll_at.asc().nulls_first(),
                          lease_seconds=settings.listening_poll_lease_seconds,
                          batch_size=settings.listening_poll_batch_size, now=now)


@dataclass
class Searched(leased_reads.SourceRead):
    """One source's search in a poll: what matched the monitor, or what went wrong."""

    source_id: uuid.UUID
    key: SourceKey
    items: list[dict] = field(default_factory=list)


def client_for(settings) -> GuardedClient:
    return leased_reads.client_for(settings.listening_poll_timeout_seconds)


def poll_monitor(*, database, settings, monitor_id, token: str, search_for: Callable = search.search_for,
                 client: GuardedClient | None = None) -> dict:
    """One poll of one monitor leased with `token`: what it found and stored, or
    {"status": "lost"} when the lease is no longer the poll's."""
    now = clock.now()
    livemode = matcher = None

    def plan(session, monitor):
        nonlocal livemode, matcher
        if not monitor.enabled:
            monitor.lease_until = monitor.claim_token = None
            return {"status": "paused"}
        livemode = monitor.livemode
        matcher = matching.Matcher([monitor])
        chosen = _choose(_sources(session, monitor, sources_of(monitor, settings), now), now,
                         settings.listening_poll_sources)
        return [Searched(source.id, SourceKey(source.platform, source.base_url, source.term), cursor=source.cursor)
                for source in chosen]

    def read(searched: Searched) -> None:
        nonlocal client
        client = client or client_for(settings)
        _search(searched, search_for, client, livemode, matcher, now)

    def record(session, monitor, searched, failure) -> dict:
        return _record(session, monitor, searched, settings, now, failure=failure)

    return POLLS.run(database=database, record_id=monitor_id, token=token, plan=plan, read=read, record=record,
                     failure_of=lambda exc: f"The signals found could not be stored: {_reason(exc)}")


def _reason(exc: Exception) -> str:
    cause = getattr(exc, "orig", None) or exc
    first_line = (str(cause).strip().splitlines() or [""])[0]
    return f"{cause.__class__.__name__}: {first_line}"[:500] if first_line else cause.__class__.__name__


def _sources(session, monitor: ListeningMonitor, keys: list[SourceKey], now) -> list[ListeningSource]:
    """The monitor's source rows for `keys`: missing ones added, others removed."""
    existing = list(session.execute(select(ListeningSource).where(ListeningSource.monitor_id == monitor.id)).scalars())
    wanted = set(keys)
    stale = [source.id for source in existing if SourceKey(source.platform, source.base_url, source.term) not in wanted]
    if stale:
        session.execute(delete(ListeningSource).where(ListeningSource.id.in_(stale))
                        .execution_options(synchronize_session=False))
    have = {SourceKey(source.platform, source.base_url, source.term) for source in existing}
    new = [dict(id=uuid.uuid4(), workspace_id=monitor.workspace_id, livemode=monitor.livemode, monitor_id=monitor.id,
                platform=key.platform, base_url=key.base_url, term=key.term, failures=0, created_at=now, updated_at=now)
           for key in keys if key not in have]
    claims.insert_new(session, ListeningSource, new, unique=["monitor_id", "platform", "base_url", "term"],
                      returning=ListeningSource.id)
    return list(session.execute(
        select(ListeningSource).where(ListeningSource.monitor_id == monitor.id)
        .execution_options(populate_existing=True)
    ).scalars())


def _choose(sources: list[ListeningSource], now, limit: int) -> list[ListeningSource]:
    """The sources not paused, the least recently searched (never, first) first."""
    ready = [source for source in sources if source.paused_until is None or source.paused_until <= now]
    ready.sort(key=lambda source: (source.last_polled_at is not None, source.last_polled_at or now,
                                   source.platform, source.base_url, source.term))
    return ready[:limit]


def _search(searched: Searched, search_for, client, livemode: bool, matcher, now) -> None:
    key = searched.key
    page = POLLS.read(
        searched,
        lambda: search_for(key.platform, livemode=livemode, client=client).search_public(
            platform=key.platform, base_url=key.base_url, term=key.term, cursor=searched.cursor,
        ),
        unexpected="The search failed unexpectedly ({error}).", what="listening search",
        extra={"source_id": str(searched.source_id)},
    )
    if page is None:
        return
    searched.items = [
        signal_fields(key.platform, post, fallback_time=now) for post in page.posts
        if matcher.match(post.text or "", platform=key.platform, language=language_of(post.language))
    ]


def label_of(key: SourceKey) -> str:
    where = key.base_url.split("://", 1)[-1]
    return f"{key.platform} '{key.term}' ({where})"


def _record(session, monitor: ListeningMonitor, searched: list[Searched], settings, now, *,
            failure: str | None = None) -> dict:
    counts = {"status": "polled", "searched": len(searched), "failed": 0, "found": 0, "created": 0, "duplicates": 0}
    if failure is None:
        items = [item for each in searched if each.error is None for item in each.items]
        counts["found"] = len(items)
        if items:
            scope = TenantScope.for_job(session, monitor.workspace_id, monitor.livemode,
                                        job=f"listening monitor {monitor.id}")
            result = signals.ingest(scope, items)
            counts["created"], counts["duplicates"] = result.created, result.duplicates
    interval = settings.listening_poll_interval_seconds
    sources = {source.id: source for source in session.execute(
        select(ListeningSource).where(ListeningSource.monitor_id == monitor.id)
    ).scalars()}
    for each in searched:
        source = sources.get(each.source_id)
        if source is None or failure is not None:
            continue
        source.last_polled_at = now
        if leased_reads.settle(source, each, now=now, pause_base=float(interval),
                               pause_max=MAX_PAUSE.total_seconds()):
            counts["failed"] += 1
    errors = [f"{label_of(SourceKey(s.platform, s.base_url, s.term))}: {s.last_error}"
              for s in sorted(sources.values(), key=lambda s: (s.platform, s.base_url, s.term)) if s.last_error]
    leased_reads.finish(monitor, now=now, errors=errors, failure=failure, interval_seconds=interval,
                        ran_at="last_polled_at", due_at="next_poll_at")
    return counts
