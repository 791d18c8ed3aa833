"""Typo tolerance, as Meilisearch allows it (one typo from 5 letters, two from 9):
when a query finds nothing, each of its words that no document of the workspace's
mode holds is replaced by the held word nearest to it (fewest typos, then held by the
most documents, counted up to `vocabulary.HOLDERS_CAP`, then alphabetical), found among the
vocabulary's candidates (trigrams) and checked by edit distance. Phrases and
exclusions are left as written.

Whether a word is held is asked of the full-text index (the engine's `holding`),
never of the vocabulary, which may keep a word whose documents went until the sweep
prunes it. The vocabulary is caught up with the scope's documents first
(socialpub.search.vocabulary): a typo query pays for the words written since the last
sweep, up to `CATCH_UP_LIMIT` documents; beyond that the sweep brings the rest
within a minute."""
from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from persistence.search import SearchDocument, SearchTerm
from socialpub.search import text, vocabulary
from socialpub.search.engines import engine
from socialpub.search.query import PHRASE, Query
from socialpub.tenancy import TenantScope

CATCH_UP_LIMIT = 1_000


def corrections(scope: TenantScope, query: Query) -> dict[str, str]:
    """Each correctable word of `query` and the word it becomes."""
    words = sorted({term.tokens[0] for term in query.positive_terms() if term.kind != PHRASE
                    and text.allowed_typos(term.tokens[0])})
    if not words:
        return {}
    session: Session = scope.session
    found = engine(session)
    documents = scope.criteria(SearchDocument)
    # One statement: which words some document holds, and whether the vocabulary
    # has documents to catch up with.
    row = session.execute(select(
        exists(select(SearchDocument.id).where(*documents, SearchDocument.vocabulary_pending)),
        *(vocabulary.holders(found, documents, word) for word in words),
    )).one()
    unknown = [word for word, held in zip(words, row[1:]) if not held]
    if not unknown:
        return {}
    if row[0]:
        for livemode in (False, True) if scope.livemode is None else (scope.livemode,):
            vocabulary.catch_up_for_reader(session, scope.workspace_id, livemode, CATCH_UP_LIMIT)
    terms = scope.criteria(SearchTerm)
    corrected = {}
    for word in unknown:
        most = text.allowed_typos(word)
        by_typos: dict[int, list[str]] = {}
        for term in found.candidates(session, terms, word, most):
            typos = text.distance(word, term, most)
            if typos <= most:
                by_typos.setdefault(typos, []).append(term)
        # The fewest typos first: the candidates of the next count are counted only
        # when no document holds any of these.
        for typos in sorted(by_typos):
            candidates = sorted(by_typos[typos])
            counts = session.execute(select(*(vocabulary.holders(found, documents, term)
                                              for term in candidates))).one()
            held = [(-count, term) for term, count in zip(candidates, counts) if count]
            if held:
                corrected[word] = min(held)[1]
                break
    return corrected
