"""The one way services read and write tenant records.

Every query goes through a TenantScope built from the authenticated key, which filters
on the key's workspace and mode, so another workspace's (or the other mode's) record
cannot be reached by forgetting a filter. Such a record is simply "not found".
"""
from __future__ import annotations

import uuid
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select

from persistence.models import TenantMixin
from socialpub.errors import ApiError

T = TypeVar("T", bound=TenantMixin)


def parse_id(value) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None


class TenantScope:
    def __init__(self, session: Session, workspace_id: uuid.UUID, livemode: bool):
        self.session = session
        self.workspace_id = workspace_id
        self.livemode = livemode
        self._remembered: dict = {}

    def remember(self, name: str, compute):
        """`compute()`, once per scope: a scope lives for one request or one chunk of a
        job, so what it remembers (such as the connected accounts) is read once
        however many posts that unit of work touches."""
        if name not in self._remembered:
            self._remembered[name] = compute()
        return self._remembered[name]

    @classmethod
    def of(cls, session: Session, principal) -> "TenantScope":
        return cls(session, principal.workspace_id, principal.livemode)

    def select(self, model: type[T], *criteria) -> Select:
        return select(model).where(
            model.workspace_id == self.workspace_id, model.livemode == self.livemode, *criteria
        )

    def count(self, model: type[T], *criteria) -> int:
        query = (
            select(func.count())
            .select_from(model)
            .where(model.workspace_id == self.workspace_id, model.livemode == self.livemode, *criteria)
        )
        return self.session.execute(query).scalar_one()

    def get(self, model: type[T], record_id, *, resource: str, for_update: bool = False, options=()) -> T:
        """The record, or 404 naming it. Malformed ids are simply not found."""
        parsed = parse_id(record_id)
        if parsed is not None:
            query = self.select(model, model.id == parsed).options(*options)
            if for_update:
                query = query.with_for_update(of=model)
            record = self.session.execute(query).scalar_one_or_none()
            if record is not None:
                return record
        raise ApiError.not_found(resource, record_id)

    def add(self, record: T) -> T:
        record.workspace_id = self.workspace_id
        record.livemode = self.livemode
        self.session.add(record)
        return record
