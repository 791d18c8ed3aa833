"""Keeping the documents current: a record (re)indexed or dropped in the writer's
transaction, and each workspace mode's vocabulary counted as documents come and go
(a word is known while some document holds it). Called by the subscribers and by
`reindex`; never by the areas."""
from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable

from sqlalchemy import Uuid, bindparam, delete, select, update
from sqlalchemy import text as sql
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

from persistence.search import SearchDocument, SearchTerm
from persistence.types import UtcDateTime, utcnow
from socialpub import claims
from socialpub.search import text
from socialpub.search.indexes import MAX_BODY_CHARS, MAX_TITLE_CHARS, SearchIndex

TermKey = tuple[uuid.UUID, bool, str]

_TERMS_ADDED = (
    "INSERT INTO search_terms (workspace_id, livemode, term, documents) "
    "SELECT CAST(:w AS uuid), CAST(:l AS boolean), unnest(CAST(:terms AS varchar[])), unnest(CAST(:counts AS int[])) "
    "ON CONFLICT (workspace_id, livemode, term) DO UPDATE SET documents = search_terms.documents + excluded.documents"
)
_ADD_TERMS = sql(_TERMS_ADDED)
# A new document and its words in one statement (PostgreSQL): what a record just
# created costs its writer, one round trip.
_ADD_DOCUMENT = sql(
    "WITH added AS (INSERT INTO search_documents (id, workspace_id, livemode, index, record_id, title, body, url, "
    "created_at, updated_at) VALUES (:id, CAST(:w AS uuid), CAST(:l AS boolean), :index, :record, :title, :body, :url, "
    ":at, :at)) " + _TERMS_ADDED
).bindparams(bindparam("at", type_=UtcDateTime), bindparam("id", type_=Uuid), bindparam("record", type_=Uuid))


def _records(record) -> list:
    return list(record) if isinstance(record, (list, tuple)) else [record]


def _existing(session: Session, index: str, record_ids: list) -> dict:
    if not record_ids:
        return {}
    # Not flushed first: the writer's pending changes are flushed, and refused, at
    # its own commit, not inside search.
    with session.no_autoflush:
        found = session.execute(
            select(SearchDocument).where(SearchDocument.index == index, SearchDocument.record_id.in_(record_ids))
        ).scalars()
        return {document.record_id: document for document in found}


def write(session: Session, index: SearchIndex, records: Iterable, *, new: bool = False) -> None:
    """(Re)indexes `records` (one record or a list) of `index`, as they are now;
    `new`: records just created, which have no document yet (nothing to read)."""
    records = _records(records)
    existing = {} if new else _existing(session, index.name, [record.id for record in records])
    delta: Counter[TermKey] = Counter()
    for record in records:
        built = index.document(session, record)
        if built is None:
            continue
        title, body = text.clean(built.title)[:MAX_TITLE_CHARS], text.clean(built.body)[:MAX_BODY_CHARS]
        tenant = (record.workspace_id, bool(record.livemode))
        document = existing.get(record.id)
        if document is None and new and len(records) == 1 and claims.has_row_locks(session):
            terms = sorted(text.vocabulary(title, body))
            with session.no_autoflush:
                session.execute(_ADD_DOCUMENT, {
                    "id": uuid.uuid4(), "w": record.workspace_id, "l": bool(record.livemode), "index": index.name,
                    "record": record.id, "title": title, "body": body, "url": built.url, "at": utcnow(),
                    "terms": terms, "counts": [1] * len(terms)})
            continue
        if document is None:
            session.add(SearchDocument(
                id=uuid.uuid4(), workspace_id=record.workspace_id, livemode=bool(record.livemode), index=index.name,
                record_id=record.id, title=title, body=body, url=built.url,
            ))
            _count(delta, tenant, text.vocabulary(title, body), 1)
            continue
        if (document.title, document.body, document.url) == (title, body, built.url):
            continue
        before, after = text.vocabulary(document.title, document.body), text.vocabulary(title, body)
        _count(delta, tenant, after - before, 1)
        _count(delta, tenant, before - after, -1)
        document.title, document.body, document.url = title, body, built.url
    _apply(session, delta)


def remove(session: Session, index: SearchIndex, records: Iterable) -> None:
    """Drops the documents of `records` (records, or their ids) from `index`."""
    ids = [getattr(record, "id", record) for record in _records(records)]
    delta: Counter[TermKey] = Counter()
    for document in _existing(session, index.name, ids).values():
        _count(delta, (document.workspace_id, document.livemode), text.vocabulary(document.title, document.body), -1)
        session.delete(document)
    _apply(session, delta)


def _count(delta: Counter, tenant: tuple[uuid.UUID, bool], terms: set[str], step: int) -> None:
    for term in terms:
        delta[(*tenant, term)] += step


def _apply(session: Session, delta: Counter) -> None:
    """Adds the vocabulary's changes: new words inserted, counts moved, words no
    document holds any more dropped; in the order of their keys, so that two writers
    never wait for each other in a loop."""
    changes = sorted((key, step) for key, step in delta.items() if step)
    if changes:
        with session.no_autoflush:
            _apply_changes(session, changes)


def _apply_changes(session: Session, changes: list) -> None:
    added = [{"workspace_id": key[0], "livemode": key[1], "term": key[2], "documents": step}
             for key, step in changes if step > 0]
    if added and claims.has_row_locks(session):
        # One statement per workspace mode, its words as arrays: one round trip inside
        # every change, and a statement compiled once.
        tenants: dict = {}
        for row in added:
            words = tenants.setdefault((row["workspace_id"], row["livemode"]), ([], []))
            words[0].append(row["term"])
            words[1].append(row["documents"])
        for (workspace_id, livemode), (terms, counts) in tenants.items():
            session.execute(_ADD_TERMS, {"w": workspace_id, "l": livemode, "terms": terms, "counts": counts})
    elif added:
        insert = sqlite.insert(SearchTerm.__table__)
        session.execute(insert.on_conflict_do_update(
            index_elements=["workspace_id", "livemode", "term"],
            set_={"documents": SearchTerm.__table__.c.documents + insert.excluded.documents},
        ), added)
    removed = [{"w": key[0], "l": key[1], "t": key[2], "n": -step} for key, step in changes if step < 0]
    if removed:
        table = SearchTerm.__table__
        at = (table.c.workspace_id == bindparam("w"), table.c.livemode == bindparam("l"), table.c.term == bindparam("t"))
        session.execute(update(table).where(*at).values(documents=table.c.documents - bindparam("n")), removed)
        session.execute(delete(table).where(*at, table.c.documents <= 0),
                        [{"w": row["w"], "l": row["l"], "t": row["t"]} for row in removed])
