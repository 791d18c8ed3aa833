"""The one way a success response is shaped (cross-cutting): `{"success": true, "data": ...}`, lists
with `pagination`. Handlers return what these functions return."""
from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session
from sqlalchemy.sql import Select

from socialpub.errors import ApiError

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class Page:
    """A page of records as services return it: the records plus how many match."""

    items: list
    total: int
    limit: int
    offset: int

    def pagination(self) -> dict:
        return {
            "totalItems": self.total,
            "totalPages": math.ceil(self.total / self.limit) if self.total else 0,
            "hasNextPage": self.offset + len(self.items) < self.total,
            "limit": self.limit,
            "offset": self.offset,
        }


def paginate(
    session: Session, query: Select, *, total: Select, limit: int, offset: int,
    rows: Callable[[Select], Select] | None = None,
) -> Page:
    """The one way a list is paged: the page of `query` (ordered by the caller) at
    `offset`, and `total`, the query for how many records match it across all pages
    (`TenantScope.count_query`, or a list's own counters), so that `totalItems` is
    exact.

    Both are asked in one statement, the total as an uncorrelated subquery that the
    database evaluates once: one round trip for a page and its total, both read from
    the same snapshot. Only a page past the end (no rows to carry the total) asks the
    total alone.

    A query of one kind of record finds its page by the records' ids first: the same
    query selecting only the ids, in the same order. An index holding the list's
    criteria, its order and the id answers that without reading a record, and only
    the page's `limit` records are read: a deep page (offset 10,000) reads 20 records,
    not 10,020. Any other query (search's rows) is paged as it is.

    `rows` reads the page as rows, not records: given the page's statement (the
    query with its page criteria and order), it returns the one to run, selecting
    the columns it names (the posts list, socialpub.posts.rows). The page's items
    are then those rows."""
    counted = total.scalar_subquery().correlate(None).label("total_items")
    keys = _ids_of(query)
    if keys is None:
        page_query = query.limit(limit).offset(offset)
    else:
        key = keys.selected_columns[0]
        page_query = query.where(key.in_(keys.limit(limit).offset(offset).correlate(None).scalar_subquery()))
    if rows is not None:
        page_query = rows(page_query)
    found = session.execute(page_query.add_columns(counted)).all()
    if found:
        items = found if rows is not None else [row[0] for row in found]
        return Page(items=items, total=found[0][-1], limit=limit, offset=offset)
    matching = session.execute(total).scalar_one() if offset else 0
    return Page(items=[], total=matching, limit=limit, offset=offset)


def _ids_of(query: Select) -> Select | None:
    """`query` selecting only its record's id (its criteria, joins and order kept), or
    None for a query that is not of one kind of record with an `id`."""
    described = query.column_descriptions
    entity = described[0].get("entity") if len(described) == 1 else None
    if entity is None or described[0]["expr"] is not entity or not hasattr(entity, "id"):
        return None
    return query.with_only_columns(entity.id)


def status_filter(column, status: str | None, statuses: type[enum.StrEnum]) -> list:
    """A list's `status` query parameter as criteria: none without it, and a refusal
    naming the resource's statuses for one it has not got."""
    if status is None:
        return []
    if status not in set(statuses):
        raise ApiError.field_invalid("query.status", f"status must be one of {', '.join(statuses)}.")
    return [column == status]


def ok(data: Any, status: int = 200, headers: dict | None = None):
    return {"success": True, "data": data}, status, headers or {}


def created(data: Any, location: str):
    return ok(data, 201, {"Location": location})


def accepted(data: Any, location: str | None = None):
    return ok(data, 202, {"Location": location} if location else None)


def deleted(identifier: str):
    return ok({"id": identifier, "deleted": True})


def page(result: Page, dump, **beside) -> tuple:
    """`dump` turns the page's records into contract objects (a marshmallow dump);
    `beside` are members of the body next to `pagination` (search's `counts`)."""
    body = {"success": True, "data": dump(result.items), "pagination": result.pagination(), **beside}
    return body, 200, {}
