"""Keeping the documents current: a record (re)indexed or dropped in the writer's
transaction. A document written is flagged `vocabulary_pending`; its words join the
vocabulary later, outside the writer's transaction (socialpub.search.vocabulary), so
a change pays for its document alone. Called by the subscribers and by `reindex`;
never by the areas."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Boolean, Uuid, bindparam, select
from sqlalchemy import text as sql
from sqlalchemy.orm import Session

from persistence.search import SearchDocument
from persistence.types import UtcDateTime, utcnow
from socialpub.search import text
from socialpub.search.indexes import MAX_BODY_CHARS, MAX_TITLE_CHARS, SearchIndex

# A new document, one statement compiled once: what a record just created costs its
# writer (vocabulary_pending is the column's default, true).
_ADD_DOCUMENT = sql(
    "INSERT INTO search_documents (id, workspace_id, livemode, \"index\", record_id, title, body, url, created_at, "
    "updated_at) VALUES (:id, :w, :l, :index, :record, :title, :body, :url, :at, :at)"
).bindparams(bindparam("id", type_=Uuid), bindparam("w", type_=Uuid), bindparam("l", type_=Boolean),
             bindparam("record", type_=Uuid), bindparam("at", type_=UtcDateTime))


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


def write(session: Session, index: SearchIndex, records: list, *, new: bool = False) -> None:
    """(Re)indexes `records` of `index`, as they are now; `new`: records just
    created, which have no document yet (nothing to read)."""
    existing = {} if new else _existing(session, index.name, [record.id for record in records])
    added = []
    for record in records:
        built = index.document(session, record)
        if built is None:
            continue
        title, body = text.clean(built.title)[:MAX_TITLE_CHARS], text.clean(built.body)[:MAX_BODY_CHARS]
        document = existing.get(record.id)
        if document is None:
            added.append({"id": uuid.uuid4(), "w": record.workspace_id, "l": bool(record.livemode),
                          "index": index.name, "record": record.id, "title": title, "body": body, "url": built.url})
            continue
        if (document.title, document.body, document.url) == (title, body, built.url):
            continue
        document.title, document.body, document.url = title, body, built.url
        document.vocabulary_pending = True
    if added:
        at = utcnow()
        for row in added:
            row["at"] = at
        with session.no_autoflush:
            session.connection().execute(_ADD_DOCUMENT, added if len(added) > 1 else added[0])


def remove(session: Session, index: SearchIndex, records: Iterable) -> None:
    """Drops the documents of `records` (records, or their ids) from `index`; their
    words stay in the vocabulary until the sweep finds no document holding them."""
    ids = [getattr(record, "id", record) for record in records]
    for document in _existing(session, index.name, ids).values():
        session.delete(document)
