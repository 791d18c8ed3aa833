"""The search text `q` in web-search syntax, read once for both databases: words
(each must match), "quoted phrases", `-word` or `-"a phrase"` (must not match),
`a OR b` (either; OR binds its neighbours, as in websearch_to_tsquery), and `word*`
(a word starting so). Words are folded (`text.fold`) and split as the databases
split them: `e-mail` is the phrase "e mail". What has no word left (`!!!`, `-`) is
dropped; a query of exclusions alone finds nothing, as it would have to read every
document."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from socialpub.search import text

MAX_TERMS = 32
_PIECES = re.compile(r'(-?)"([^"]*)"?|(\S+)')

WORD, PREFIX, PHRASE = "word", "prefix", "phrase"


@dataclass(frozen=True)
class Term:
    kind: str  # word, prefix or phrase
    tokens: tuple[str, ...]
    # A prefix's whole words that a database also looks for (SQLite: those its
    # stemmer may shorten below the prefix; see SqliteEngine.widen).
    widened: tuple[str, ...] = ()

    def render(self) -> str:
        if self.kind == PHRASE:
            return '"' + " ".join(self.tokens) + '"'
        return self.tokens[0] + ("*" if self.kind == PREFIX else "")


@dataclass(frozen=True)
class Query:
    """Every clause must match (a clause: one term, or terms joined by OR), no
    excluded term may."""

    clauses: tuple[tuple[Term, ...], ...]
    excluded: tuple[Term, ...]

    @property
    def empty(self) -> bool:
        return not self.clauses

    def positive_terms(self) -> list[Term]:
        return [term for clause in self.clauses for term in clause]

    def render(self) -> str:
        parts = [" OR ".join(term.render() for term in clause) for clause in self.clauses]
        parts += ["-" + term.render() for term in self.excluded]
        return " ".join(parts)

    def widened(self, widen) -> Query:
        """The query with each prefix it looks for given `widen(prefix)`'s words."""
        def apply(term: Term) -> Term:
            return replace(term, widened=tuple(widen(term.tokens[0]))) if term.kind == PREFIX else term
        return Query(tuple(tuple(apply(term) for term in clause) for clause in self.clauses), self.excluded)

    def corrected(self, corrections: dict[str, str]) -> Query:
        """The query with its words (not phrases) replaced as `corrections` says."""
        def fix(term: Term) -> Term:
            if term.kind == PHRASE or term.tokens[0] not in corrections:
                return term
            return replace(term, kind=WORD, tokens=(corrections[term.tokens[0]],))
        return Query(tuple(tuple(fix(term) for term in clause) for clause in self.clauses), self.excluded)


def _term(raw: str, *, quoted: bool) -> Term | None:
    prefix = not quoted and raw.endswith("*")
    tokens = tuple(token[: text.MAX_TERM_CHARS] for token in text.words(raw))
    if not tokens:
        return None
    if quoted or len(tokens) > 1:
        return Term(PHRASE if len(tokens) > 1 else WORD, tokens)
    return Term(PREFIX if prefix else WORD, tokens)


def parse(q: str) -> Query:
    clauses: list[list[Term]] = []
    excluded: list[Term] = []
    joining = False  # the previous piece was OR, after a positive term
    count = 0
    for found in _PIECES.finditer(q):
        negated_phrase, phrase, bare = found.groups()
        if bare == "OR":
            joining = bool(clauses) and not joining
            continue
        negated = bool(negated_phrase) or (bare is not None and bare.startswith("-") and len(bare) > 1)
        raw = phrase if phrase is not None else bare.lstrip("-") if negated else bare
        term = _term(raw, quoted=phrase is not None)
        if term is None or count >= MAX_TERMS:
            joining = False
            continue
        count += 1
        if negated:
            excluded.append(term)
        elif joining:
            clauses[-1].append(term)
        else:
            clauses.append([term])
        joining = False
    return Query(tuple(tuple(clause) for clause in clauses), tuple(excluded))
