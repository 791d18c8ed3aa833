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

from collections import Counter
from dataclasses import replace

from sqlalchemy import (
    Float,
    and_,
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
from sqlalchemy.orm import Bundle, Session

from persistence.search import SearchDocument, SearchTerm
from socialpub import claims
from socialpub.search import text as texts
from socialpub.search.query import PHRASE, PREFIX, Query, Term
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
        for config in ("socialpub_english", "socialpub_simple"):
            regconfig = literal_column(f"'{config}'::regconfig")
            if term.kind == PREFIX:
                yield func.to_tsquery(regconfig, literal(term.tokens[0] + ":*"), type_=TSQUERY)
            elif term.kind == PHRASE and loose:
                # Its words, in any place: what the index answers without reading positions.
                yield func.websearch_to_tsquery(regconfig, literal(" ".join(term.tokens)), type_=TSQUERY)
            elif term.kind == PHRASE:
                yield func.websearch_to_tsquery(regconfig, literal('"' + " ".join(term.tokens) + '"'), type_=TSQUERY)
            else:
                yield func.websearch_to_tsquery(regconfig, literal(term.tokens[0]), type_=TSQUERY)

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

    def matching(self, statement, query: Query):
        """`statement` over the documents that match `query`."""
        return statement.select_from(SearchDocument).where(self.document.op("@@")(self.tsquery(query)))

    def _read(self, query: Query, criteria: list, columns: list, first: int):
        """`columns` (and `document`) of the documents that match `query`, as a
        subquery, and whether it is bounded by reading: a query with a phrase reads the
        first `PHRASE_CANDIDATES` documents holding the phrase's words (found by the
        index alone), then checks where they stand in those; another reads the first
        `first` matches."""
        phrases = has_phrase(query)
        if not phrases:
            return self.matching(select(*columns, self.document.label("document")), query).where(*criteria) \
                .limit(first).subquery("matched"), False
        candidates = (
            select(*columns, self.document.label("document")).select_from(SearchDocument)
            .where(self.document.op("@@")(self.tsquery(query, loose=True)), *criteria)
            .limit(PHRASE_CANDIDATES).subquery("candidates")
        )
        return candidates, True

    def count(self, session: Session, query: Query, criteria: list, cap: int) -> tuple[dict, bool, list | None]:
        """The matches per index among those read, whether they are all the matches,
        and for a query with a phrase, the matches (`cap` at most), so that the page
        ranks them without checking the phrase again."""
        read, phrases = self._read(query, criteria, [SearchDocument.id, SearchDocument.index], cap + 1)
        if not phrases:
            counts = dict(session.execute(select(read.c.index, func.count()).group_by(read.c.index)).all())
            return counts, sum(counts.values()) <= cap, None
        matched = read.c.document.op("@@")(self.tsquery(query))
        rows = session.execute(
            select(read.c.index, func.array_agg(read.c.id).filter(matched), func.count()).group_by(read.c.index)).all()
        counts = {row[0]: len(row[1]) for row in rows if row[1]}
        ids = sorted(found for row in rows if row[1] for found in row[1])
        exact = sum(row[2] for row in rows) < PHRASE_CANDIDATES and len(ids) <= cap
        return counts, exact, ids[:cap]

    def page(self, query: Query, criteria: list, *, window: int | None, ids: list | None = None):
        """The results by score: every match, or the first `window` read, ranked
        (`ids`: the matches, already known)."""
        if ids is not None:
            read = select(*_FIELDS, self.document.label("document")).where(SearchDocument.id.in_(ids), *criteria) \
                .subquery("matched")
        else:
            read, _ = self._read(query, criteria, list(_FIELDS), window)
        score = func.ts_rank_cd(read.c.document, self.tsquery(query), type_=Float).label("score")
        fields = [read.c[field.key] for field in _FIELDS]
        return select(Bundle("hit", *fields, score)).order_by(score.desc(), read.c.id)

    def highlights(self, session: Session, query: Query, ids: list) -> dict:
        """ts_headline over the words the document was indexed by (`words_sql`), in
        both configurations; the words it marks are marked in the stored text. Per
        document, its body's and its title's highlighted text, in that order."""
        tsquery = self.tsquery(query)
        fields = (SearchDocument.body, SearchDocument.title)
        columns = [
            func.ts_headline(literal_column(f"'{config}'::regconfig"), words_sql(field), tsquery,
                             self._headline_options)
            for field in fields for config in ("socialpub_english", "socialpub_simple")
        ]
        rows = session.execute(select(SearchDocument.id, *fields, *columns).where(SearchDocument.id.in_(ids)))
        # Marked as they are read, the body first: the title is marked only when the
        # body has no match to show.
        return {row[0]: (texts.mark_words(text_, *headlines) for text_, headlines in
                         ((row[1], row[3:5]), (row[2], row[5:7])))
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

    def _matches(self, query: Query | str, *, scored: bool = True, rowids: list | None = None):
        """The full-text matches (of a query, or an FTS5 expression) and their score,
        read from FTS5 first: a subquery with a LIMIT, which SQLite keeps whole (not
        flattened into a join that would probe FTS5 once per document). `rowids`: only
        those, filtered among the matches (unary plus: not a lookup per rowid)."""
        expression = query if isinstance(query, str) else fts5_expression(query)
        score = (-func.bm25(_fts_name, 10.0, 1.0, type_=Float)) if scored else literal(0.0, Float)
        among = () if rowids is None else (literal_column("+search_documents_fts.rowid").in_(rowids),)
        exact = () if isinstance(query, str) else self._exact(query)
        return (
            select(_fts.c.rowid.label("rid"), score.label("score"))
            .where(_fts_name.op("MATCH")(expression), *among, *exact).limit(-1).subquery("matches")
        )

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

    def matching(self, statement, query: Query | str, matches=None):
        matches = self._matches(query) if matches is None else matches
        return statement.select_from(matches).join(SearchDocument, literal_column("search_documents.rowid") == matches.c.rid)

    def count(self, session: Session, query: Query, criteria: list, cap: int) -> tuple[dict, bool, list | None]:
        """The matches per index among the first `cap` + 1 read, whether they are all,
        and for a query with a phrase, the matches read (`cap` at most, their rowids),
        so that the page ranks them without looking for the phrase again."""
        if has_phrase(query):
            rowid = literal_column("search_documents.rowid")
            rows = session.execute(
                self.matching(select(SearchDocument.index, rowid), query, self._matches(query, scored=False))
                .where(*criteria).limit(cap + 1)
            ).all()
            counts = Counter(row[0] for row in rows)
            return dict(counts), len(rows) <= cap, sorted(row[1] for row in rows)[:cap]
        read = (
            self.matching(select(SearchDocument.index), query, self._matches(query, scored=False)).where(*criteria)
            .limit(cap + 1).subquery("read")
        )
        counts = dict(session.execute(select(read.c.index, func.count()).group_by(read.c.index)).all())
        return counts, sum(counts.values()) <= cap, None

    def page(self, query: Query, criteria: list, *, window: int | None, ids: list | None = None):
        """The results by score (bm25, title ten times the body): every match, or the
        first `window` read, ranked. `ids`: a phrase's matches (rowids), already
        found: ranked by bm25 over the phrase's words, which FTS5 weighs from its
        index alone (bm25 of the phrase itself first finds every document of the
        database holding it, to weigh it: a phrase of frequent words read for
        hundreds of milliseconds)."""
        if ids is not None:
            matches = self._matches(fts5_expression(query, loose=True), rowids=ids)
            ranked = self.matching(select(*_FIELDS, matches.c.score), query, matches).where(*criteria) \
                .subquery("ranked")
            fields = [ranked.c[field.key] for field in _FIELDS]
            return select(Bundle("hit", *fields, ranked.c.score)).order_by(ranked.c.score.desc(), ranked.c.id)
        matches = self._matches(query)
        # The workspace mode's matches, as FTS5 reads them (its score computed for
        # those read alone), at most `window` of them; then ranked.
        ranked = (
            self.matching(select(*_FIELDS, matches.c.score), query, matches).where(*criteria)
            .limit(-1 if window is None else window).subquery("ranked")
        )
        fields = [ranked.c[field.key] for field in _FIELDS]
        return select(Bundle("hit", *fields, ranked.c.score)).order_by(ranked.c.score.desc(), ranked.c.id)

    def highlights(self, session: Session, query: Query, ids: list) -> dict:
        rowids = dict(session.execute(
            select(literal_column("search_documents.rowid"), SearchDocument.id).where(SearchDocument.id.in_(ids))
        ).all())
        columns = [func.highlight(_fts_name, number, START, STOP) for number in (1, 0)]
        rows = session.execute(
            select(_fts.c.rowid, *columns).where(
                _fts_name.op("MATCH")(fts5_expression(query)), _fts.c.rowid >= min(rowids),
                _fts.c.rowid <= max(rowids), _fts.c.rowid.in_(list(rowids)))
        )
        return {rowids[row[0]]: [row[1], row[2]] for row in rows}

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
        return self.matching(select(literal(1)), f'"{term}"', self._matches(f'"{term}"', scored=False)) \
            .where(*criteria)


_POSTGRES, _SQLITE = PostgresEngine(), SqliteEngine()


def engine(session: Session):
    return _POSTGRES if claims.has_row_locks(session) else _SQLITE
