"""The calls the sandbox platform received (the sandbox connector's own record,
shared by every area that publishes or replies through it)."""
from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, Index, String, Text, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TimestampedMixin


class SandboxCall(TimestampedMixin, Base):
    """Every call the sandbox platform received, for test mode and tests, a row each.
    Like a real platform honouring idempotency keys, it accepts each key once; a
    repeat is a row of its own (outcome `repeated`) carrying the first receipt."""

    __tablename__ = "sandbox_calls"

    account_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False)
    idempotency_key: Mapped[str] = mapped_column(String(100), nullable=False)
    kind: Mapped[str] = mapped_column(String(20), nullable=False)
    outcome: Mapped[str] = mapped_column(String(20), nullable=False)  # accepted | repeated | transient | permanent
    content: Mapped[str] = mapped_column(Text, nullable=False)
    external_id: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (
        Index("ix_sandbox_calls_key", "idempotency_key", "kind"),
        # One accepted delivery per key, even when two duplicate jobs race.
        Index(
            "uq_sandbox_calls_accepted", "idempotency_key", "kind", unique=True,
            postgresql_where=text("outcome = 'accepted'"), sqlite_where=text("outcome = 'accepted'"),
        ),
    )
