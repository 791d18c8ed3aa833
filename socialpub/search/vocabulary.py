"""The vocabulary of each workspace's mode (search_terms): the words typo tolerance
corrects towards, kept out of the writers' transactions.

A writer writes its document, flagged `vocabulary_pending`, and no word
(socialpub.search.documents): what a change costs is its document alone. The
vocabulary is insert-only and is brought up to date after the fact:

- `catch_up` takes a workspace mode's pending documents (on PostgreSQL locked
  `FOR UPDATE SKIP LOCKED`: two catch-ups at once never take the same document, nor
  one a writer is changing), inserts their words (one statement, sorted, `ON CONFLICT
  DO NOTHING`: a word already there costs nothing) and clears their flags. Typo
  tolerance catches its query's scope up before correcting (`catch_up_for_reader`,
  bounded: beyond the bound the sweep brings the rest within a minute); the sweep
  (`sweep`, every minute, socialpub.search.jobs) catches up every scope with
  pending documents.
- `prune` deletes the words no document of their workspace mode holds any more (their
  documents changed or deleted), checked through the full-text index a bounded slice
  at a time; the sweep goes on where its previous run stopped (a position kept by the
  process: a restart starts again from the first word).

So a word is in the vocabulary once a document holding it was caught up, and may
stay after its last document went, until pruned: typo tolerance checks that a word is
held through the full-text index, never by its presence here (socialpub.search.typos).
A catch-up and a prune of one workspace mode exclude each other (`claims.hold`): a
prune that judged a word dead could otherwise delete it just after a catch-up found
it there for a document the prune's snapshot did not see.
"""
from __future__ import annotations

import logging
from itertools import groupby

from sqlalchemy import (
    Boolean,
    String,
    Uuid,
    bindparam,
    delete,
    exists,
    func,
    select,
    tuple_,
    update,
)
from sqlalchemy import text as sql
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from persistence.search import SearchDocument, SearchTerm
from socialpub import claims, sweeps
from socialpub.search import text
from socialpub.search.engines import engine

logger = logging.getLogger("socialpub.search")

CATCH_UP_BATCH = 500  # documents a transaction of the sweep
SWEEP_DOCUMENTS = 2_000  # documents a run of the sweep catches up, at most
PRUNE_BATCH = 500  # words a transaction of the sweep checks (a probe each, in one statement)
SWEEP_TERMS = 2_000  # words a run of the sweep checks, at most
HOLDERS_CAP = 1_000  # documents holding a word counted, at most

# PostgreSQL: the words as one array, the statement compiled once.
_ADD_TERMS = sql(
    "INSERT INTO search_terms (workspace_id, livemode, term) SELECT :w, :l, unnest(:terms) "
    "ON CONFLICT (workspace_id, livemode, term) DO NOTHING"
).bindparams(bindparam("w", type_=Uuid), bindparam("l", type_=Boolean), bindparam("terms", type_=ARRAY(String)))


def holders(found, criteria: list, word: str, cap: int = HOLDERS_CAP):
    """How many documents (of `criteria`) hold `word`, counted up to `cap` through the
    full-text index (`found`, the session's engine): a scalar subquery. Counted, even
    where any would do (a query's words), rather than asked whether one exists:
    PostgreSQL plans a search for the first match as if matches were spread evenly,
    and would read every document looking for a word none holds; up to `cap`, a word
    it takes for rare is looked up in the index."""
    return select(func.count()).select_from(found.holding(criteria, word).limit(cap).subquery()).scalar_subquery()


def _lock_name(workspace_id, livemode: bool) -> str:
    return f"search vocabulary {workspace_id} {'live' if livemode else 'test'}"


def _add_words(session: Session, workspace_id, livemode: bool, words: list[str]) -> None:
    if claims.has_row_locks(session):
        session.execute(_ADD_TERMS, {"w": workspace_id, "l": livemode, "terms": words})
        return
    insert = sqlite.insert(SearchTerm.__table__).on_conflict_do_nothing()
    session.execute(insert, [{"workspace_id": workspace_id, "livemode": livemode, "term": word} for word in words])


def catch_up(session: Session, workspace_id, livemode: bool, limit: int) -> int:
    """Adds the words of up to `limit` pending documents of the workspace mode to its
    vocabulary and clears their flags, in the caller's transaction; how many
    documents it took (fewer than `limit`: none is left but those others hold)."""
    claims.hold(session, _lock_name(workspace_id, livemode), shared=True)
    pending = select(SearchDocument.id, SearchDocument.title, SearchDocument.body).where(
        SearchDocument.workspace_id == workspace_id, SearchDocument.livemode == livemode,
        SearchDocument.vocabulary_pending).limit(limit)
    with session.no_autoflush:
        rows = session.execute(claims.lock_rows(session, pending, skip_locked=True)).all()
        if not rows:
            return 0
        words = sorted(set().union(*(text.vocabulary(row.title, row.body) for row in rows)))
        if words:
            _add_words(session, workspace_id, livemode, words)
        session.execute(
            update(SearchDocument).where(SearchDocument.id.in_([row.id for row in rows]))
            .values(vocabulary_pending=False, updated_at=SearchDocument.updated_at)  # the record's, untouched
            .execution_options(synchronize_session=False)
        )
    return len(rows)


def catch_up_for_reader(session: Session, workspace_id, livemode: bool, limit: int) -> int:
    """`catch_up` for a reader (a search), in a transaction of its own, committed: the
    reader's session ends what it had (it wrote nothing; an API GET on PostgreSQL
    reads in autocommit, where row locks would not last) and goes on afterwards."""
    session.commit()
    try:
        done = catch_up(session, workspace_id, livemode, limit)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return done


def prune(session: Session, *, after: tuple | None, limit: int, workspace_id=None) -> tuple[int, tuple | None]:
    """Checks the `limit` words of the vocabulary (of `workspace_id`'s modes, or of
    every workspace) that follow `after` (a key, (workspace_id, livemode, term); None:
    from the first) and deletes those no document of their workspace mode holds; how
    many it deleted, and the key to go on after (None: it reached the last word)."""
    key = (SearchTerm.workspace_id, SearchTerm.livemode, SearchTerm.term)
    query = select(*key).order_by(*key).limit(limit)
    if workspace_id is not None:
        query = query.where(SearchTerm.workspace_id == workspace_id)
    if after is not None:
        query = query.where(tuple_(*key) > tuple_(*(bindparam(None, value, type_=column.type)
                                                   for column, value in zip(key, after))))
    rows = [tuple(row) for row in session.execute(query)]
    removed, found = 0, engine(session)
    for (tenant, livemode), slice_ in groupby(rows, key=lambda row: row[:2]):
        words = [row[2] for row in slice_]
        claims.hold(session, _lock_name(tenant, livemode))
        criteria = [SearchDocument.workspace_id == tenant, SearchDocument.livemode == livemode]
        # One statement, a probe a word, each through the full-text index.
        found.probing_by_index(session)
        held = session.execute(select(*(exists(found.holding(criteria, word)) for word in words))).one()
        dead = [word for word, alive in zip(words, held) if not alive]
        if dead:
            removed += session.execute(
                delete(SearchTerm).where(SearchTerm.workspace_id == tenant, SearchTerm.livemode == livemode,
                                         SearchTerm.term.in_(dead)).execution_options(synchronize_session=False)
            ).rowcount
    return removed, (rows[-1] if len(rows) == limit else None)


def refresh(session: Session, workspace_id, *, batch: int) -> None:
    """Brings the vocabulary of both modes of a workspace up to date with its
    documents: every pending document caught up, every word no document holds pruned;
    committed a batch at a time (`reindex`)."""
    for livemode in (False, True):
        while catch_up(session, workspace_id, livemode, batch) == batch:
            session.commit()
        session.commit()
    after = None
    while True:
        _, after = prune(session, after=after, limit=batch, workspace_id=workspace_id)
        session.commit()
        if after is None:
            return


# Where this process's sweep stopped pruning (the key of the last word checked).
_prune_position = sweeps.Position()


def sweep(database, *, documents: int = SWEEP_DOCUMENTS, terms: int = SWEEP_TERMS) -> dict[str, int]:
    """The periodic upkeep: every workspace mode with pending documents caught up (up
    to `documents` documents in all, a transaction a batch), then up to `terms` words
    checked and the dead ones pruned, from where the previous run stopped."""
    with database.transaction() as session:
        scopes = session.execute(
            select(SearchDocument.workspace_id, SearchDocument.livemode)
            .where(SearchDocument.vocabulary_pending).distinct()
        ).all()
    caught = 0
    for workspace_id, livemode in scopes:
        while caught < documents:
            batch = min(CATCH_UP_BATCH, documents - caught)
            with database.transaction() as session:
                done = catch_up(session, workspace_id, livemode, batch)
            caught += done
            if done < batch:
                break
    pruned = checked = 0
    while checked < terms:
        batch = min(PRUNE_BATCH, terms - checked)
        with database.transaction() as session:
            removed, after = prune(session, after=_prune_position.after, limit=batch)
        _prune_position.after = after
        pruned, checked = pruned + removed, checked + batch
        if after is None:
            break
    if caught or pruned:
        logger.info("search vocabulary swept", extra={"documents": caught, "pruned": pruned})
    return {"documents": caught, "pruned": pruned}
