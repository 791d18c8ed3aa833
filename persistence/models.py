"""The shared declarative base and mixins of every model (cross-cutting).

Each area's models live in `persistence/<area>.py`; `socialpub.areas.import_models()`
imports them all, so that `Base.metadata` holds every table for migrations and their
checks. Tenant tables carry `workspace_id` and `livemode`; services reach them only
through `socialpub.tenancy.TenantScope`, which always filters on both.
"""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import Boolean, ForeignKey, String, Uuid
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from persistence.types import UtcDateTime, utcnow


class Base(DeclarativeBase):
    pass


def _as_created(context) -> dt.datetime:
    """A new row was last updated when it was created: the same instant, not a second
    reading of the clock a few microseconds later."""
    created = context.get_current_parameters().get("created_at")
    return created if created is not None else utcnow()


class TimestampedMixin:
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=_as_created, onupdate=utcnow, nullable=False)

    def __init__(self, **values) -> None:
        # The id is drawn when the object is made, not when it is inserted: a flush
        # that has every new row's key sends them as one batch of a short statement.
        # Keys drawn at the insert must come back (RETURNING), which SQLAlchemy does
        # with a statement of one placeholder a value, that the driver parses anew.
        values.setdefault("id", uuid.uuid4())
        super().__init__(**values)


class TenantMixin(TimestampedMixin):
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)


class LeasedMixin:
    """A row one worker at a time holds (see socialpub.claims): it is held until
    `lease_until`, by whoever holds `claim_token`; a lease that runs out frees it."""

    lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    claim_token: Mapped[str | None] = mapped_column(String(36))
