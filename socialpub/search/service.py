"""Searching a workspace's mode: `GET /search` (every index, interleaved by score,
with the number of matches per index) and `GET /search/{index}` (one). A query that
finds nothing is tried again with its misspelt words corrected (socialpub.search.typos),
and the answer names the corrected query (`did_you_mean`). Snippets are made for the
returned page alone. `reindex` rebuilds an index from the records (the CLI)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from persistence.search import SearchDocument
from socialpub.envelope import Page
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.search import documents, indexes, typos, vocabulary
from socialpub.search import text as texts
from socialpub.search.engines import engine
from socialpub.search.query import Query, parse
from socialpub.tenancy import Actor, TenantScope

REINDEX_BATCH = 500
# A query is counted up to this many matches: one matching more (a word found in
# half the workspace) reads, counts and ranks the first this many it finds, its
# counts then lower bounds (`counts_exact` false), so that it answers as fast as
# a rare word.
COUNT_CAP = 1000


@dataclass
class Hit:
    index: str
    id: object
    title: str
    snippet: str
    score: float
    url: str


@dataclass
class SearchResult:
    page: Page
    counts: dict[str, int] | None
    did_you_mean: str | None
    counts_exact: bool = True


def known_index(name: str) -> str:
    if name not in indexes.INDEXES:
        raise ApiError(404, "resource_not_found",
                       f"No search index '{name}'; the indexes are {', '.join(indexes.NAMES)}.")
    return name


def search(*, session: Session, principal: Principal, q: str, index: str | None = None, limit: int = 20,
           offset: int = 0) -> SearchResult:
    """Every index (`index` None: with the counts per index), or one."""
    if index is not None:
        known_index(index)
    scope = TenantScope.of(session, principal)
    query = parse(q)
    result = _answer(scope, query, index, limit, offset)
    if result.page.total or query.empty:
        return result
    corrections = typos.corrections(scope, query)
    if not corrections:
        return result
    corrected = query.corrected(corrections)
    found = _answer(scope, corrected, index, limit, offset)
    found.did_you_mean = corrected.render()
    return found


def _criteria(scope: TenantScope, query: Query, index: str | None) -> list:
    criteria = list(scope.criteria(SearchDocument))
    if index is not None:
        criteria.append(SearchDocument.index == index)
    return criteria


def _answer(scope: TenantScope, query: Query, index: str | None, limit: int, offset: int) -> SearchResult:
    every = index is None
    counts = dict.fromkeys(indexes.NAMES, 0) if every else None
    if query.empty:
        return SearchResult(Page(items=[], total=0, limit=limit, offset=offset), counts, None)
    session, found = scope.session, engine(scope.session)
    query = found.widen(session, query)
    # The matches, read and ranked at once: at most `COUNT_CAP` of them (when there
    # are more, the answer is the best of the first read; its pages hold them all
    # (totalItems) and its counts are lower bounds).
    ranked = found.ranked(session, query, _criteria(scope, query, index), COUNT_CAP, offset, limit)
    if every:
        counts.update(ranked.counts)
    shown = found.shown(session, query, [row[0] for row in ranked.page]) if ranked.page else {}
    hits = []
    for document_id, _index, score in ranked.page:
        if document_id not in shown:
            continue  # deleted since it was read
        (_id, index_name, record_id, title, body, url), highlighted = shown[document_id]
        hits.append(Hit(index=index_name, id=record_id, title=title, url=url, score=round(float(score), 6),
                        snippet=_snippet(highlighted, body)))
    return SearchResult(Page(items=hits, total=ranked.total, limit=limit, offset=offset), counts, None, ranked.exact)


def _snippet(highlighted: Iterable[str], body: str) -> str:
    """The body around its first match; else the title's match; else the body's start."""
    for candidate in highlighted:
        if candidate and texts.START in candidate:
            return texts.snippet(candidate)
    return texts.snippet(body)


def reindex(*, session: Session, actor: Actor, workspace_id, index: str) -> int:
    """Rebuilds `index` of a workspace (both modes) from its records, committed in
    batches: its documents dropped, each record indexed anew, then the workspace's
    vocabulary brought up to date (the new documents' words added, the words no
    document holds any more dropped). How many records it indexed."""
    declared = indexes.INDEXES[known_index(index)]
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    while True:
        stale = list(session.execute(
            scope.select(SearchDocument, SearchDocument.index == index).limit(REINDEX_BATCH)
        ).scalars())
        if not stale:
            break
        documents.remove(session, declared, [document.record_id for document in stale])
        session.commit()
    model, count, last = declared.model, 0, None
    while True:
        batch_query = scope.select(model, *(() if last is None else (model.id > last,)))
        batch = list(session.execute(batch_query.order_by(model.id).limit(REINDEX_BATCH)).scalars())
        if not batch:
            vocabulary.refresh(session, scope.workspace_id, batch=REINDEX_BATCH)
            return count
        documents.write(session, declared, batch)
        session.commit()
        count, last = count + len(batch), batch[-1].id
