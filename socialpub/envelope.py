"""The one way a success response is shaped (cross-cutting): `{"success": true, "data": ...}`, lists
with `pagination`. Handlers return what these functions return."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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


def ok(data: Any, status: int = 200, headers: dict | None = None):
    return {"success": True, "data": data}, status, headers or {}


def created(data: Any, location: str):
    return ok(data, 201, {"Location": location})


def accepted(data: Any, location: str | None = None):
    return ok(data, 202, {"Location": location} if location else None)


def deleted(identifier: str):
    return ok({"id": identifier, "deleted": True})


def page(result: Page, dump) -> tuple:
    """`dump` turns the page's records into contract objects (a marshmallow dump)."""
    body = {"success": True, "data": dump(result.items), "pagination": result.pagination()}
    return body, 200, {}
