"""Ranking the matches a query read (socialpub.search.engines) into the page asked
for: the page's matches best first (score, then id), the matches per index, how many
(`cap` at most) and whether they are all. PostgreSQL ranks them in one statement that
returns the page and the counts alone; SQLite's are ranked in Python, faster there
than its window function over them."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sqlalchemy import BigInteger, Float, cast, func, null, select, union_all
from sqlalchemy.orm import Session

from persistence.search import SearchDocument


@dataclass
class Ranked:
    """A query's answer before its documents are read: the page's matches, each
    `(id, index, score)`, best first; the matches per index; how many (`cap` at
    most); and whether they are all the matches."""
    page: list
    counts: dict
    total: int
    exact: bool

    @classmethod
    def of(cls, session: Session, read, cap: int, offset: int, limit: int, *, candidates: int | None = None) -> Ranked:
        """`read` (a CTE of `id`, `index` and `score`, NULL where a candidate read is
        no match) ranked by score, then id, its best `cap` kept: one statement
        returning the page and the counts per index alone. `read` holds `cap` + 1
        rows at most, or `candidates` (a phrase's documents read): fewer than those
        read is all the matches (PostgreSQL, which sorts them in C)."""
        place = func.row_number().over(order_by=(read.c.score.desc(), read.c.id))
        placed = select(read.c.id, read.c.index, read.c.score, place.label("place")) \
            .where(read.c.score.is_not(None)).cte("placed")
        nothing, number = null(), cast(null(), BigInteger)
        parts = [
            # The page: (id, index, score, place, -).
            select(placed.c.id, placed.c.index, placed.c.score, placed.c.place, number)
            .where(placed.c.place > offset, placed.c.place <= min(offset + limit, cap)),
            # The matches per index: (-, index, -, the best `cap`'s, all read).
            select(cast(nothing, SearchDocument.id.type), placed.c.index, cast(nothing, Float),
                   func.count().filter(placed.c.place <= cap), func.count()).group_by(placed.c.index),
        ]
        if candidates is not None:
            # The documents read: (-, -, -, -, how many).
            parts.append(select(cast(nothing, SearchDocument.id.type), cast(nothing, SearchDocument.index.type),
                                cast(nothing, Float), number, select(func.count()).select_from(read).scalar_subquery()))
        page, counts, found, read_count = [], {}, 0, 0
        for document_id, index, score, first, every in session.execute(union_all(*parts)):
            if document_id is not None:
                page.append((first, (document_id, index, score)))
            elif index is not None:
                counts[index], found = first, found + every
            else:
                read_count = every
        exact = found <= cap and (candidates is None or read_count < candidates)
        return cls(page=[row for _place, row in sorted(page)], counts=counts, total=min(found, cap), exact=exact)

    @classmethod
    def listed(cls, rows: list, cap: int, offset: int, limit: int, *, exact: bool) -> Ranked:
        """From every match read, each `(id, index, score)`: the best `cap` kept, ranked
        in Python (SQLite: faster than its window function over them)."""
        kept = sorted(rows, key=lambda row: (-row[2], row[0].int))[:cap]
        return cls(page=[tuple(row) for row in kept[offset:offset + limit]], counts=dict(Counter(row[1] for row in kept)),
                   total=len(kept), exact=exact)
