"""Bulk operations and the posts they refused."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class BulkStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


# Final states: nothing more happens to an operation in one of them.
FINISHED_STATUSES = (BulkStatus.COMPLETED, BulkStatus.CANCELLED, BulkStatus.FAILED)


class BulkOperation(TenantMixin, LeasedMixin, Base):
    """One bulk request: an action over up to 500 posts, run by workers in chunks.

    `entries` are the request's posts in order; `processed` is how many of them have
    been applied or refused, and advances in the same transaction as their effects,
    so it is also where a run resumes. A run holds the operation through a lease and
    a token, as publishing jobs hold their targets: a worker that dies leaves a lease
    that runs out, and the next run carries on from `processed`."""

    __tablename__ = "bulk_operations"

    action: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=BulkStatus.PENDING)
    # [[post id as sent, scheduledAt ISO 8601 or null], ...]: one row, so that
    # accepting 500 posts costs one insert. Read only by runs.
    entries: Mapped[list] = mapped_column(JSON, nullable=False, deferred=True)
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    processed: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    failed: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # Runs that found the previous run's lease expired: a chunk that keeps killing
    # its worker fails the operation instead of looping for ever.
    runs: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    cancel_requested_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    item_errors: Mapped[list["BulkItemError"]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="BulkItemError.position",
    )

    __table_args__ = (
        Index("ix_bulk_operations_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_bulk_operations_unfinished", "status", "lease_until"),
    )


class BulkItemError(Base):
    """A post of a bulk operation that was refused, and why. Written in the same
    transaction as the rest of its chunk."""

    __tablename__ = "bulk_item_errors"

    operation_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("bulk_operations.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    post_id: Mapped[str] = mapped_column(String(100), nullable=False)
    code: Mapped[str] = mapped_column(String(100), nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)
