"""Signals: ingesting them (`ingest`, the one path of the API's single and bulk
ingest and of the platforms' poll) and listing them.

An ingest checks each item on its own (`inputs`: an invalid one never sinks the
others), takes each (platform, external id) once (a repeat in the same ingest, or
one already stored in the workspace's mode, is a duplicate: nothing changes),
scores the new ones' sentiment (`sentiment`) and matches them against the enabled
monitors compiled once for the ingest (`matching`), then stores them in the
caller's transaction in batched inserts that leave out what a concurrent ingest
stored first (`claims.insert_new`), with the monitors each matched
(`ListeningSignalMonitor`), and adds them to the daily counts the stats read
(`rollups`, one upsert). The new signals are announced once per ingest
(`changes.SIGNALS`, kind `ingested`).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlalchemy import and_, func, insert, or_, select
from sqlalchemy.orm import make_transient_to_detached

from persistence.listening import ListeningSignal as Signal
from persistence.listening import ListeningSignalMonitor as SignalMonitor
from persistence.listening import SentimentLabel
from socialpub import claims, clock
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.listening import matching, rollups, sentiment
from socialpub.listening.changes import SIGNALS
from socialpub.listening.inputs import item_fields
from socialpub.principal import Principal
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import TenantScope, parse_id, scoped

MAX_BULK = 100
# Rows a statement inserts, and keys a statement looks up (a poll may ingest more).
INSERT_CHUNK = 500

CREATED, DUPLICATE, INVALID = "created", "duplicate", "invalid"


@dataclass
class ItemResult:
    """What became of one item: `created` (`signal` is the new row), `duplicate`
    (`signal_id` is the stored signal's) or `invalid` (`error` says why)."""

    index: int
    status: str
    signal_id: uuid.UUID | None = None
    signal: Signal | None = None
    error: ApiError | None = None


@dataclass
class IngestResult:
    results: list[ItemResult]
    # The new rows, in the order of the items, each with its `monitor_ids`.
    signals: list[Signal] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for result in self.results if result.status == status)

    @property
    def created(self) -> int:
        return self.count(CREATED)

    @property
    def duplicates(self) -> int:
        return self.count(DUPLICATE)

    @property
    def invalid(self) -> int:
        return self.count(INVALID)


# --- the API's operations ------------------------------------------------------------


def ingest_signal(*, session, principal: Principal, **fields) -> tuple[Signal, bool]:
    """One signal: (the new signal, True), or (the stored one, False) for a duplicate.
    An invalid one is refused (422) and nothing is stored."""
    scope = TenantScope.of(session, principal)
    result = ingest(scope, [fields]).results[0]
    if result.status == INVALID:
        raise result.error
    session.commit()
    if result.status == CREATED:
        return result.signal, True
    signal = scope.get(Signal, result.signal_id, resource="signal")
    attach_monitor_ids(scope, [signal])
    return signal, False


def ingest_signals(*, session, principal: Principal, items: list) -> IngestResult:
    """Up to MAX_BULK items, each a signal's fields or the ApiError it was refused
    with when read; each item's result, its problems named within `signals[i]`."""
    if len(items) > MAX_BULK:
        raise ApiError.field_invalid("signals", f"A bulk ingest takes at most {MAX_BULK} signals; it has {len(items)}.")
    if not items:
        raise ApiError.field_invalid("signals", "A bulk ingest takes at least one signal.")
    result = ingest(TenantScope.of(session, principal), items)
    session.commit()
    for item in result.results:
        if item.error is not None:
            item.error = within(item.error, f"signals[{item.index}]")
    return result


@scoped
def list_signals(scope: TenantScope, *, monitor_id=None, sentiment_label: str | None = None,
                 platform: str | None = None, since=None, until=None, limit: int = 20, offset: int = 0) -> Page:
    """Newest first (by `posted_at`). A monitor of another workspace or mode, or no
    monitor at all, lists nothing."""
    session = scope.session
    since, until = parse_timestamp(since, "from"), parse_timestamp(until, "to")
    if since is not None and until is not None and since >= until:
        raise ApiError.field_invalid("from", "from must be before to.")
    if sentiment_label is not None and sentiment_label not in set(SentimentLabel):
        raise ApiError.field_invalid("sentiment", f"sentiment must be one of {', '.join(SentimentLabel)}.")
    if monitor_id is not None:
        page = _list_by_monitor(scope, parse_id(monitor_id), sentiment_label, platform, since, until, limit, offset)
    else:
        criteria = _criteria(Signal, sentiment_label, platform, since, until)
        query = scope.select(Signal, *criteria).order_by(Signal.posted_at.desc(), Signal.id.desc())
        page = paginate(session, query, total=scope.count_query(Signal, *criteria), limit=limit, offset=offset)
    attach_monitor_ids(scope, page.items)
    return page


def _criteria(model, sentiment_label, platform, since, until) -> list:
    criteria = []
    if sentiment_label is not None:
        criteria.append(model.sentiment_label == sentiment_label)
    if platform is not None:
        criteria.append(model.platform == platform)
    if since is not None:
        criteria.append(model.posted_at >= since)
    if until is not None:
        criteria.append(model.posted_at < until)
    return criteria


def _list_by_monitor(scope, monitor_id, sentiment_label, platform, since, until, limit, offset) -> Page:
    # The link repeats what the filters read, so the page walks its index by monitor
    # and time and the count reads the link alone.
    if monitor_id is None:
        return Page(items=[], total=0, limit=limit, offset=offset)
    criteria = [*scope.criteria(SignalMonitor), SignalMonitor.monitor_id == monitor_id,
                *_criteria(SignalMonitor, sentiment_label, platform, since, until)]
    query = (
        scope.select(Signal).join(SignalMonitor, SignalMonitor.signal_id == Signal.id).where(*criteria)
        .order_by(SignalMonitor.posted_at.desc(), SignalMonitor.signal_id.desc())
    )
    total = select(func.count()).select_from(SignalMonitor).where(*criteria)
    return paginate(scope.session, query, total=total, limit=limit, offset=offset)


def attach_monitor_ids(scope: TenantScope, signals: list[Signal]) -> None:
    """Each signal's `monitor_ids`, for a page of signals in one query."""
    if not signals:
        return
    found: dict = {signal.id: [] for signal in signals}
    rows = scope.session.execute(
        select(SignalMonitor.signal_id, SignalMonitor.monitor_id)
        .where(*scope.criteria(SignalMonitor), SignalMonitor.signal_id.in_(list(found)))
    )
    for signal_id, monitor_id in rows:
        found[signal_id].append(monitor_id)
    for signal in signals:
        signal.monitor_ids = sorted(found[signal.id], key=str)


def within(error: ApiError, prefix: str) -> ApiError:
    """`error` with its fields named within `prefix` (`content` -> `signals[3].content`)."""
    details = [
        {**detail, "field": f"{prefix}.{detail['field']}" if detail.get("field") not in (None, "body") else prefix}
        for detail in error.details or []
    ]
    return ApiError(error.status, error.code, error.message, details=details or None)


# --- the one ingest ------------------------------------------------------------------


def ingest(scope: TenantScope, items: list) -> IngestResult:
    """Ingests `items` (each a mapping of FIELDS, or the ApiError it was refused with
    when read) in the scope's workspace and mode, in the caller's transaction (which
    it does not commit)."""
    results: list[ItemResult | None] = [None] * len(items)
    first: dict[tuple[str, str], int] = {}
    unique: list[tuple[int, dict]] = []
    repeats: list[tuple[int, tuple[str, str]]] = []
    for index, item in enumerate(items):
        try:
            fields = item_fields(item)
        except ApiError as error:
            results[index] = ItemResult(index, INVALID, error=error)
            continue
        key = (fields["platform"], fields["external_id"])
        if key in first:
            repeats.append((index, key))
        else:
            first[key] = index
            unique.append((index, fields))

    ids = _stored(scope, [key for key in first])
    new = [(index, fields) for index, fields in unique if (fields["platform"], fields["external_id"]) not in ids]
    rows, links = _rows(scope, new)
    inserted = set()
    for start in range(0, len(rows), INSERT_CHUNK):
        inserted.update(claims.insert_new(
            scope.session, Signal, rows[start:start + INSERT_CHUNK],
            unique=["workspace_id", "livemode", "platform", "external_id"], returning=Signal.id,
        ))
    # What a concurrent ingest stored between the look-up and the insert is its.
    lost = [(row["platform"], row["external_id"]) for row in rows if row["id"] not in inserted]
    ids.update(_stored(scope, lost))
    link_rows = [link for row in rows if row["id"] in inserted for link in links[row["id"]]]
    if link_rows:
        # The table's insert, returning: SQLAlchemy then sends its rows in multi-row
        # batches by one cached statement, where the driver would send one a row.
        scope.session.execute(insert(SignalMonitor.__table__).returning(SignalMonitor.signal_id), link_rows).all()
    new_rows = [row for row in rows if row["id"] in inserted]
    rollups.add_ingest(scope, new_rows, links)
    stored = _persistent(scope, new_rows)

    created: list[Signal] = []
    for (index, fields), row in zip(new, rows):
        signal = stored.get(row["id"])
        if signal is not None:
            signal.monitor_ids = [link["monitor_id"] for link in links[row["id"]]]
            results[index] = ItemResult(index, CREATED, signal_id=signal.id, signal=signal)
            created.append(signal)
    for index, fields in unique:
        if results[index] is None:
            stored_id = ids.get((fields["platform"], fields["external_id"]))
            results[index] = ItemResult(index, DUPLICATE, signal_id=stored_id)
    for index, key in repeats:
        results[index] = ItemResult(index, DUPLICATE, signal_id=results[first[key]].signal_id)

    if created:
        matched = sorted({monitor_id for signal in created for monitor_id in signal.monitor_ids}, key=str)
        SIGNALS.announce("ingested", scope=scope, record=created, monitor_ids=matched)
    return IngestResult(results=results, signals=created)


def _rows(scope: TenantScope, new: list[tuple[int, dict]]) -> tuple[list[dict], dict]:
    """The new signals' rows, each scored and matched, and the monitors each matched."""
    matcher = matching.enabled_monitors(scope) if new else None
    now = clock.now()
    rows, links = [], {}
    for _, fields in new:
        scored = sentiment.score(fields["content"])
        signal_id = uuid.uuid4()
        rows.append(dict(
            id=signal_id, workspace_id=scope.workspace_id, livemode=scope.livemode, created_at=now, updated_at=now,
            sentiment_score=scored.score, sentiment_label=scored.label, **fields,
        ))
        links[signal_id] = [
            dict(signal_id=signal_id, monitor_id=monitor_id, workspace_id=scope.workspace_id,
                 livemode=scope.livemode, posted_at=fields["posted_at"], sentiment_label=scored.label,
                 platform=fields["platform"])
            for monitor_id in matcher.match(fields["content"], platform=fields["platform"],
                                            language=fields["language"])
        ]
    return rows, links


def _stored(scope: TenantScope, keys: list[tuple[str, str]]) -> dict[tuple[str, str], uuid.UUID]:
    """The ids of the signals stored under these (platform, external id) keys."""
    found = {}
    for start in range(0, len(keys), INSERT_CHUNK):
        by_platform: dict[str, list[str]] = {}
        for platform, external_id in keys[start:start + INSERT_CHUNK]:
            by_platform.setdefault(platform, []).append(external_id)
        rows = scope.session.execute(
            select(Signal.platform, Signal.external_id, Signal.id).where(*scope.criteria(Signal), or_(*(
                and_(Signal.platform == platform, Signal.external_id.in_(external_ids))
                for platform, external_ids in by_platform.items()
            )))
        )
        found.update({(platform, external_id): signal_id for platform, external_id, signal_id in rows})
    return found


def _persistent(scope: TenantScope, rows: list[dict]) -> dict:
    """The rows just inserted as the session's ListeningSignal records, as if read
    back (every column is in the row): no second round trip for them."""
    records = {}
    for row in rows:
        record = Signal(**row)
        make_transient_to_detached(record)
        scope.session.add(record)
        records[record.id] = record
    return records
