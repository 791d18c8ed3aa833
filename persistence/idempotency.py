"""Responses kept for repeated Idempotency-Key requests."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import JSON, ForeignKey, Index, Integer, LargeBinary, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin
from persistence.types import UtcDateTime


class IdempotencyRecord(TenantMixin, Base):
    """The first response to a POST sent with an Idempotency-Key, replayed for 24
    hours to repeats from the same API key."""

    __tablename__ = "idempotency_records"

    api_key_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("api_keys.id", ondelete="CASCADE"), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)  # in_progress | completed
    response_status: Mapped[int | None] = mapped_column(Integer)
    response_headers: Mapped[dict | None] = mapped_column(JSON)
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary)
    locked_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)

    __table_args__ = (
        UniqueConstraint("api_key_id", "key", name="uq_idempotency_records_key"),
        Index("ix_idempotency_records_expires", "expires_at"),
    )
