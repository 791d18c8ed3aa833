"""Keeping the documents current: a record (re)indexed or dropped in the writer's
transaction. A document written is flagged `vocabulary_pending`; its words join the
vocabulary later, outside the writer's transaction (socialpub.search.vocabulary), so
a change pays for its document alone. Called by the subscribers and by `reindex`;
never by the areas.

On PostgreSQL the writer also writes the document's vector (`VECTOR_SQL`): english
stems of its title (weight A) and body (B), and the simple configuration's whole
words of both (D), accents folded by unaccent, made from the words Python splits
(socialpub.search.text.indexed, as the vocabulary splits them), so the database
stems them and runs no expression over the text. SQLite's FTS5 table follows the
documents by triggers."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Boolean, Uuid, bindparam, select
from sqlalchemy import text as sql
from sqlalchemy.orm import Session

from persistence.search import SearchDocument
from persistence.types import UtcDateTime, utcnow
from socialpub import claims
from socialpub.search import text
from socialpub.search.indexes import MAX_BODY_CHARS, MAX_TITLE_CHARS, SearchIndex

# A document's vector from its words (`:title_words`, `:body_words`): migration 0034.
VECTOR_SQL = (
    "setweight(to_tsvector('socialpub_english'::regconfig, :title_words), 'A') || "
    "setweight(to_tsvector('socialpub_english'::regconfig, :body_words), 'B') || "
    "setweight(to_tsvector('socialpub_simple'::regconfig, :title_words || ' ' || :body_words), 'D')"
)
_TYPES = (bindparam("id", type_=Uuid), bindparam("w", type_=Uuid), bindparam("l", type_=Boolean),
          bindparam("record", type_=Uuid), bindparam("pending", type_=Boolean), bindparam("at", type_=UtcDateTime))
_COLUMNS = 'id, workspace_id, livemode, "index", record_id, title, body, url, vocabulary_pending, created_at, updated_at'
_VALUES = ":id, :w, :l, :index, :record, :title, :body, :url, :pending, :at, :at"
# New documents, one statement compiled once per database: what a record just created
# costs its writer.
_ADD = {
    True: sql(f"INSERT INTO search_documents ({_COLUMNS}, document) VALUES ({_VALUES}, {VECTOR_SQL})")
    .bindparams(*_TYPES),
    False: sql(f"INSERT INTO search_documents ({_COLUMNS}) VALUES ({_VALUES})").bindparams(*_TYPES),
}
_CHANGE_SET = "title = :title, body = :body, url = :url, vocabulary_pending = true, updated_at = :at"
_CHANGE = {
    True: sql(f"UPDATE search_documents SET {_CHANGE_SET}, document = {VECTOR_SQL} WHERE id = :id")
    .bindparams(bindparam("id", type_=Uuid), bindparam("at", type_=UtcDateTime)),
    False: sql(f"UPDATE search_documents SET {_CHANGE_SET} WHERE id = :id")
    .bindparams(bindparam("id", type_=Uuid), bindparam("at", type_=UtcDateTime)),
}


def _existing(session: Session, index: str, record_ids: list) -> dict:
    if not record_ids:
        return {}
    # Not flushed first: the writer's pending changes are flushed, and refused, at
    # its own commit, not inside search.
    with session.no_autoflush:
        found = session.execute(
            select(SearchDocument.id, SearchDocument.record_id, SearchDocument.title, SearchDocument.body,
                   SearchDocument.url)
            .where(SearchDocument.index == index, SearchDocument.record_id.in_(record_ids))
        ).all()
        return {row.record_id: row for row in found}


def _with_words(session: Session, rows: list[dict]) -> list[dict]:
    if claims.has_row_locks(session):  # PostgreSQL: the vector's words
        for row in rows:
            row["title_words"], row["body_words"] = text.indexed(row["title"]), text.indexed(row["body"])
    return rows


def add(session: Session, rows: list[dict], *, pending: bool = True) -> None:
    """Inserts documents: dicts of `id`, `w` (workspace), `l` (livemode), `index`,
    `record`, `title`, `body` and `url`, cleaned and cut to size (`write`); `pending`:
    their words are not in the vocabulary yet. The one way documents are inserted."""
    if not rows:
        return
    at = utcnow()
    for row in rows:
        row.setdefault("at", at)
        row["pending"] = pending
    rows = _with_words(session, rows)
    with session.no_autoflush:
        session.connection().execute(_ADD[claims.has_row_locks(session)], rows if len(rows) > 1 else rows[0])


def write(session: Session, index: SearchIndex, records: list, *, new: bool = False) -> None:
    """(Re)indexes `records` of `index`, as they are now; `new`: records just
    created, which have no document yet (nothing to read)."""
    existing = {} if new else _existing(session, index.name, [record.id for record in records])
    added, changed = [], []
    for record in records:
        built = index.document(session, record)
        if built is None:
            continue
        title, body = text.clean(built.title)[:MAX_TITLE_CHARS], text.clean(built.body)[:MAX_BODY_CHARS]
        document = existing.get(record.id)
        if document is None:
            added.append({"id": uuid.uuid4(), "w": record.workspace_id, "l": bool(record.livemode),
                          "index": index.name, "record": record.id, "title": title, "body": body, "url": built.url})
        elif (document.title, document.body, document.url) != (title, body, built.url):
            changed.append({"id": document.id, "title": title, "body": body, "url": built.url})
    add(session, added)
    if changed:
        at = utcnow()
        for row in changed:
            row["at"] = at
        with session.no_autoflush:
            session.connection().execute(_CHANGE[claims.has_row_locks(session)], _with_words(session, changed))


def remove(session: Session, index: SearchIndex, records: Iterable) -> None:
    """Drops the documents of `records` (records, or their ids) from `index`; their
    words stay in the vocabulary until the sweep finds no document holding them."""
    ids = [getattr(record, "id", record) for record in records]
    found = _existing(session, index.name, ids)
    if found:
        with session.no_autoflush:
            session.execute(
                SearchDocument.__table__.delete().where(SearchDocument.id.in_([row.id for row in found.values()]))
            )
