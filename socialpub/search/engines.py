"""The two databases' full-text search behind one interface: a parsed query
(socialpub.search.query) as a criterion, a score (higher is better), the highlighted
text of the documents of a page, the vocabulary's candidates for a misspelt word, and
the documents that hold a word (typo tolerance's and the vocabulary's check that a
word is alive).

- PostgreSQL: the `document` tsvector its writer writes (english and simple stemming,
  accents folded by unaccent; socialpub.search.documents.VECTOR_SQL) matched with
  `@@`, words and phrases as `websearch_to_tsquery`, prefixes as
  `to_tsquery('word:*')`, each in both configurations; `ts_rank_cd`;
  `ts_headline` for the page alone; candidates from the trigram index (pg_trgm).
- SQLite: FTS5 (porter stemming, diacritics removed) with `bm25` and `highlight`; a
  prefix also as the words written that start with it (an unstemmed FTS5 index,
  `search_words_fts`); candidates from the vocabulary's FTS5 trigram table.
"""
from __future__ import annotations

import itertools
from dataclasses import replace

from sqlalchemy import (
    Float,
    and_,
    case,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.dialects.postgresql import TSQUERY, TSVECTOR
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import Join

from persistence import plans
from persistence.search import SearchDocument, SearchTerm
from socialpub import claims
from socialpub.search import text as texts
from socialpub.search.query import PHRASE, PREFIX, Query, Term
from socialpub.search.ranking import Ranked
from socialpub.search.text import START, STOP

TRIGRAM_THRESHOLD = 0.2
_FIELDS = (SearchDocument.id, SearchDocument.index, SearchDocument.record_id, SearchDocument.title,
           SearchDocument.body, SearchDocument.url)
MAX_CANDIDATES = 200
# A phrase is looked for in at most this many documents holding its words (checking
# where the words stand reads each document): a phrase of frequent words is answered
# from those, its counts then lower bounds.
PHRASE_CANDIDATES = 1000


def words_sql(field):
    """A column's words (runs of letters and digits) separated by spaces, in SQL: the
    text the highlighter marks, split as the vector's words are (socialpub.search.text.indexed)."""
    return func.regexp_replace(field, literal_column("'[^[:alnum:]]+'"), literal_column("' '"), literal_column("'g'"))


class PostgresEngine:
    document = literal_column("search_documents.document", type_=TSVECTOR)
    _headline_options = f'HighlightAll=true, StartSel="{START}", StopSel="{STOP}"'

    def __init__(self):
        self._trigram_schema: dict[str, str] = {}

    def _configs(self, term: Term, loose: bool = False):
        # The words are stated (persistence.plans): a search's plan must know how many
        # documents hold them (a phrase of frequent words was read through a bitmap of
        # every document holding them). They are letters and digits only
        # (socialpub.search.text.words), rendered as a quoted literal.
        for config in ("socialpub_english", "socialpub_simple"):
            regconfig = literal_column(f"'{config}'::regconfig")
            if term.kind == PREFIX:
                yield func.to_tsquery(regconfig, plans.stated(term.tokens[0] + ":*"), type_=TSQUERY)
            elif term.kind == PHRASE and loose:
                # Its words, in any place: what the index answers without reading positions.
                yield func.websearch_to_tsquery(regconfig, plans.stated(" ".join(term.tokens)), type_=TSQUERY)
            elif term.kind == PHRASE:
                phrase = '"' + " ".join(term.tokens) + '"'
                yield func.websearch_to_tsquery(regconfig, plans.stated(phrase), type_=TSQUERY)
            else:
                yield func.websearch_to_tsquery(regconfig, plans.stated(term.tokens[0]), type_=TSQUERY)

    def _term(self, term: Term, loose: bool = False):
        english, simple = self._configs(term, loose)
        return func.tsquery_or(english, simple, type_=TSQUERY)

    def tsquery(self, query: Query, loose: bool = False):
        def joined(function, parts):
            result = parts[0]
            for part in parts[1:]:
                result = function(result, part, type_=TSQUERY)
            return result
        clauses = [joined(func.tsquery_or, [self._term(term, loose) for term in clause]) for clause in query.clauses]
        result = joined(func.tsquery_and, clauses)
        for term in query.excluded:
            if loose and term.kind == PHRASE:
                continue  # loose: a superset of the matches
            result = func.tsquery_and(result, func.tsquery_not(self._term(term), type_=TSQUERY), type_=TSQUERY)
        return result

    def ranked(self, session: Session, query: Query, criteria: list, cap: int, offset: int, limit: int) -> Ranked:
        """The matches read, ranked, in one statement that returns the page and the
        counts alone. A query with a phrase reads the first `PHRASE_CANDIDATES`
        documents holding the phrase's words (found by the index alone), scoring
        those where the phrase stands; another reads and scores the first `cap` + 1
        matches. The best `cap` of those read are ranked (score, then id)."""
        tsquery = self.tsquery(query)
        matched = self.document.op("@@")(tsquery)
        score = func.ts_rank_cd(self.document, tsquery, type_=Float)
        phrases = has_phrase(query)
        if phrases:
            score, matched = case((matched, score)), self.document.op("@@")(self.tsquery(query, loose=True))
        read = (
            select(SearchDocument.id, SearchDocument.index, score.label("score")).where(matched, *criteria)
            .limit(PHRASE_CANDIDATES if phrases else cap + 1).cte("read")
        )
        return Ranked.of(session, read, cap, offset, limit, candidates=PHRASE_CANDIDATES if phrases else None)

    def shown(self, session: Session, query: Query, ids: list) -> dict:
        """The documents `ids` as a page shows them: per id, its row (`_FIELDS`) and
        its body's and its title's highlighted text, in that order. ts_headline over
        the words the document was indexed by (`words_sql`), in both configurations;
        the words it marks are marked in the stored text."""
        tsquery = self.tsquery(query)
        columns = [
            func.ts_headline(literal_column(f"'{config}'::regconfig"), words_sql(field), tsquery,
                             self._headline_options)
            for field in (SearchDocument.body, SearchDocument.title) for config in ("socialpub_english", "socialpub_simple")
        ]
        rows = session.execute(select(*_FIELDS, *columns).where(SearchDocument.id.in_(ids)))
        width = len(_FIELDS)
        # Marked as they are read, the body first: the title is marked only when the
        # body has no match to show.
        return {row[0]: (row[:width], (texts.mark_words(text_, *headlines) for text_, headlines in
                               ((row.body, row[width:width + 2]), (row.title, row[width + 2:width + 4]))))
                for row in rows}

    def candidates(self, session: Session, criteria: list, word: str, most: int) -> list[str]:
        """The vocabulary's words like `word` (trigrams), within `most` letters of its length."""
        schema = self._schema(session)
        session.execute(text("SELECT set_config('pg_trgm.similarity_threshold', :value, false)"),
                        {"value": str(TRIGRAM_THRESHOLD)})
        similar = SearchTerm.term.op(f'OPERATOR("{schema}".%)')(word)
        return list(session.execute(
            select(SearchTerm.term)
            .where(*criteria, similar, func.length(SearchTerm.term).between(len(word) - most, len(word) + most))
            .order_by(func.length(SearchTerm.term) - len(word)).limit(MAX_CANDIDATES)
        ).scalars())

    def widen(self, _session: Session, query: Query) -> Query:
        """Nothing to do: the simple configuration keeps every word whole, and a
        prefix is read against it as well as against the stems."""
        return query

    def holding(self, criteria: list, term: str):
        """The documents (of `criteria`) that hold the word `term` as the vocabulary
        folds it: the simple configuration's words, found through the GIN index (the
        word a value: planned with the word's own statistics, a rare word through the
        index, a frequent one where a scan finds it at once)."""
        held = func.plainto_tsquery(literal_column("'socialpub_simple'::regconfig"), term, type_=TSQUERY)
        return select(literal(1)).select_from(SearchDocument).where(*criteria, self.document.op("@@")(held))

    def probing_by_index(self, session: Session) -> None:
        """For the rest of the transaction, statements read through bitmaps of indexes
        alone: a probe for whether any document holds a word (`exists(holding(...))`)
        is then one GIN lookup, where the planner, taking matches to be spread evenly,
        would scan the documents for the first (every one of them for a word none
        holds)."""
        session.execute(text("SELECT set_config('enable_seqscan', 'off', true), "
                             "set_config('enable_indexscan', 'off', true)"))

    def _schema(self, session: Session) -> str:
        key = str(session.get_bind().engine.url)
        if key not in self._trigram_schema:
            self._trigram_schema[key] = session.execute(text(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
                "WHERE e.extname = 'pg_trgm'"
            )).scalar_one()
        return self._trigram_schema[key]


_fts = table("search_documents_fts", column("rowid"))
_fts_name = literal_column("search_documents_fts")
_terms_fts = table("search_terms_fts", column("rowid"))
_words_vocab = table("search_words_vocab", column("term"))
_words = table("search_words_fts", column("rowid"))
_words_name = literal_column("search_words_fts")

# bm25, the title ten times the body; higher is better.
SCORE = (-func.bm25(_fts_name, 10.0, 1.0, type_=Float)).label("score")


class _Leading(Join):
    """A join read left table first: SQLite's CROSS JOIN, which its planner never
    reorders (socialpub.search.engines.SqliteEngine.matching)."""

    inherit_cache = True


@compiles(_Leading, "sqlite")
def _cross_join(join, compiler, from_linter=None, **kw):
    if from_linter is not None:  # the two joined, as for any join
        from_linter.edges.update(itertools.product(join.left._from_objects, join.right._from_objects))
    kw.update(asfrom=True, from_linter=from_linter)
    return (compiler.process(join.left, **kw) + " CROSS JOIN " + compiler.process(join.right, **kw)
            + " ON " + compiler.process(join.onclause, **{**kw, "asfrom": False}))


def _fts5_term(term: Term, loose: bool = False) -> str:
    # Tokens are letters and digits only (socialpub.search.text.words): nothing to escape.
    if loose and term.kind == PHRASE:
        return "(" + " AND ".join(f'"{token}"' for token in term.tokens) + ")"
    quoted = '"' + " ".join(term.tokens) + '"'
    if term.kind != PREFIX:
        return quoted
    if not term.widened:
        return quoted + " *"
    return "(" + " OR ".join([quoted + " *", *(f'"{word}"' for word in term.widened)]) + ")"


def fts5_expression(query: Query, loose: bool = False) -> str:
    """The FTS5 query; `loose`: each phrase as its words in any place, phrases
    excluded not applied (a superset of the matches, read without positions)."""
    clauses = ["(" + " OR ".join(_fts5_term(term, loose) for term in clause) + ")" for clause in query.clauses]
    expression = "(" + " AND ".join(clauses) + ")"
    for term in query.excluded:
        if not (loose and term.kind == PHRASE):
            expression += " NOT " + _fts5_term(term)
    return expression


def has_phrase(query: Query) -> bool:
    return any(term.kind == PHRASE for term in (*query.positive_terms(), *query.excluded))


class SqliteEngine:
    # The whole words a prefix is widened with: the shortest first (a stem shorter
    # than the prefix comes from a word a few letters longer), among the first
    # WIDEN_READ of the prefix's words.
    WIDEN_WORDS = 64
    WIDEN_READ = 2_000

    def widen(self, session: Session, query: Query) -> Query:
        """FTS5 reads `word*` against the stems, and a word its stemmer shortens
        below the prefix (`running` is `run`) is not found by `runni*`: each prefix
        looked for is also looked for as the words written that start with it, read
        from the unstemmed index (search_words_vocab, kept in the writers'
        transactions), each found by its stem. A stem is shared by other words (`run`):
        `_exact` then keeps the documents holding a word that starts with the prefix."""
        if not any(term.kind == PREFIX for term in query.positive_terms()):  # an excluded one is not widened
            return query

        def words(prefix: str) -> list[str]:
            following = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            read = (
                select(_words_vocab.c.term.label("term")).where(_words_vocab.c.term >= prefix,
                                                                _words_vocab.c.term < following)
                .limit(self.WIDEN_READ).subquery("read")
            )
            found = session.execute(
                select(read.c.term).where(read.c.term != prefix)
                .order_by(func.length(read.c.term), read.c.term).limit(self.WIDEN_WORDS)
            ).scalars()
            # Letters and digits only, as the query's own words (nothing to escape).
            return [word for word in found if texts.is_word(word)]

        return query.widened(words)

    def _conditions(self, query: Query | str, rowids: list | None = None) -> list:
        """The full-text conditions of a query (or an FTS5 expression) on
        `search_documents_fts`; `rowids`: only those, filtered among the matches (unary
        plus: not a lookup per rowid)."""
        expression = query if isinstance(query, str) else fts5_expression(query)
        among = () if rowids is None else (literal_column("+search_documents_fts.rowid").in_(rowids),)
        exact = () if isinstance(query, str) else self._exact(query)
        return [_fts_name.op("MATCH")(expression), *among, *exact]

    @staticmethod
    def _exact(query: Query) -> list:
        """What a prefix means beside the stems: a clause with a widened prefix holds
        when its terms match as stems or a word written starts with the prefix (the
        unstemmed index); an excluded prefix excludes both. Unary plus: filters on
        the matches read, not lookups per rowid."""
        rowid = literal_column("+search_documents_fts.rowid")

        def written(prefixes: list[Term]):
            expression = " OR ".join(f'"{term.tokens[0]}" *' for term in prefixes)
            return select(_words.c.rowid).where(_words_name.op("MATCH")(expression))

        conditions = []
        for clause in query.clauses:
            prefixes = [term for term in clause if term.kind == PREFIX and term.widened]
            if prefixes:
                as_stems = "(" + " OR ".join(_fts5_term(replace(term, widened=())) for term in clause) + ")"
                stemmed = select(_fts.c.rowid).where(_fts_name.op("MATCH")(as_stems))
                conditions.append(or_(rowid.in_(stemmed), rowid.in_(written(prefixes))))
        excluded = [term for term in query.excluded if term.kind == PREFIX]
        if excluded:
            conditions.append(rowid.not_in(written(excluded)))
        return conditions

    def matching(self, statement, query: Query | str, rowids: list | None = None):
        """`statement` over the documents matching `query` (it may select `SCORE`):
        FTS5 read first, in rowid order, each match then joined to its document (a
        CROSS JOIN, which SQLite keeps in that order). So a LIMIT stops the reading:
        a subquery of the matches would be read whole first (a frequent word's
        hundred thousand matches scored, for its first thousand), and a plain join
        may start from the documents, probing FTS5 once for each."""
        onto = _Leading(_fts, SearchDocument.__table__, literal_column("search_documents.rowid") == _fts.c.rowid)
        return statement.select_from(onto).where(*self._conditions(query, rowids))

    def ranked(self, session: Session, query: Query, criteria: list, cap: int, offset: int, limit: int) -> Ranked:
        """The matches read (`cap` + 1 at most), ranked (bm25, the title ten times the
        body; then id), the best `cap` of them paged. A
        phrase's matches are found first, then ranked by bm25 over the phrase's words,
        which FTS5 weighs from its index alone (bm25 of the phrase itself first finds
        every document of the database holding it, to weigh it: a phrase of frequent
        words read for hundreds of milliseconds)."""
        if has_phrase(query):
            rowid = literal_column("search_documents.rowid")
            found = session.execute(self.matching(select(rowid), query).where(*criteria).limit(cap + 1)).scalars().all()
            if not found:
                return Ranked.listed([], cap, offset, limit, exact=True)
            rows = session.execute(self.matching(
                select(SearchDocument.id, SearchDocument.index, SCORE), fts5_expression(query, loose=True),
                rowids=found[:cap])).all()
            return Ranked.listed(rows, cap, offset, limit, exact=len(found) <= cap)
        # The workspace mode's matches, as FTS5 reads them (scored as they are read).
        rows = session.execute(
            self.matching(select(SearchDocument.id, SearchDocument.index, SCORE), query).where(*criteria).limit(cap + 1)
        ).all()
        return Ranked.listed(rows, cap, offset, limit, exact=len(rows) <= cap)

    def shown(self, session: Session, query: Query, ids: list) -> dict:
        """The documents `ids` as a page shows them: per id, its row (`_FIELDS`) and
        its body's and its title's highlighted text (FTS5's `highlight`), in that order."""
        rowid = literal_column("search_documents.rowid")
        rows = {row[-1]: row for row in session.execute(select(*_FIELDS, rowid).where(SearchDocument.id.in_(ids)))}
        columns = [func.highlight(_fts_name, number, START, STOP) for number in (1, 0)]
        highlighted = {
            row[0]: [row[1], row[2]] for row in session.execute(
                select(_fts.c.rowid, *columns).where(
                    _fts_name.op("MATCH")(fts5_expression(query)), _fts.c.rowid >= min(rows),
                    _fts.c.rowid <= max(rows), literal_column("+search_documents_fts.rowid").in_(list(rows))))
        }
        return {row[0]: (row[:-1], highlighted.get(number, [])) for number, row in rows.items()}

    def candidates(self, session: Session, criteria: list, word: str, most: int) -> list[str]:
        """The vocabulary's words sharing trigrams with `word`, best first, within
        `most` letters of its length."""
        padded = f" {word} "
        trigrams = sorted({padded[i:i + 3] for i in range(len(padded) - 2)})
        expression = " OR ".join('"' + trigram + '"' for trigram in trigrams)
        return list(session.execute(
            select(SearchTerm.term)
            .select_from(SearchTerm)
            .join(_terms_fts, _terms_fts.c.rowid == literal_column("search_terms.rowid"))
            .where(literal_column("search_terms_fts").op("MATCH")(expression), *criteria,
                   and_(func.length(SearchTerm.term) >= len(word) - most, func.length(SearchTerm.term) <= len(word) + most))
            .order_by(literal_column("search_terms_fts.rank")).limit(MAX_CANDIDATES)
        ).scalars())

    def probing_by_index(self, session: Session) -> None:
        """Nothing to do: FTS5 finds a word's documents through its own index."""

    def holding(self, criteria: list, term: str):
        """The documents (of `criteria`) that hold the word `term`, found through FTS5
        (its words are stemmed: a word is held by the documents its stem finds, those
        a search for it finds)."""
        # Words are letters and digits only (socialpub.search.text.words): nothing to escape.
        return self.matching(select(literal(1)), f'"{term}"').where(*criteria)


_POSTGRES, _SQLITE = PostgresEngine(), SqliteEngine()


def engine(session: Session):
    return _POSTGRES if claims.has_row_locks(session) else _SQLITE
