"""Typo tolerance, as Meilisearch allows it (one typo from 5 letters, two from 9):
when a query finds nothing, each of its words the workspace's mode does not know is
replaced by the known word nearest to it (fewest typos, then the most documents,
then alphabetical), found among the vocabulary's candidates (trigrams) and checked
by edit distance. Phrases and exclusions are left as written."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from persistence.search import SearchTerm
from socialpub.search import text
from socialpub.search.engines import engine
from socialpub.search.query import PHRASE, Query
from socialpub.tenancy import TenantScope


def corrections(scope: TenantScope, query: Query) -> dict[str, str]:
    """Each correctable word of `query` and the word it becomes."""
    words = sorted({term.tokens[0] for term in query.positive_terms() if term.kind != PHRASE
                    and text.allowed_typos(term.tokens[0])})
    if not words:
        return {}
    session: Session = scope.session
    criteria = scope.criteria(SearchTerm)
    known = set(session.execute(select(SearchTerm.term).where(*criteria, SearchTerm.term.in_(words))).scalars())
    found = {}
    for word in words:
        if word in known:
            continue
        most = text.allowed_typos(word)
        best = None
        for term, documents in engine(session).candidates(session, criteria, word, most):
            typos = text.distance(word, term, most)
            if typos <= most:
                key = (typos, -documents, term)
                best = key if best is None or key < best else best
        if best is not None:
            found[word] = best[2]
    return found
