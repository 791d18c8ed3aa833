"""Connected social accounts, and the calls the sandbox platform received."""
from __future__ import annotations

import enum
import uuid

from sqlalchemy import JSON, ForeignKey, Index, String, Text, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin, TimestampedMixin


class AccountStatus(enum.StrEnum):
    ACTIVE = "active"
    # The platform refused the account's credentials: it is connected again before
    # anything more is published to it.
    NEEDS_REAUTH = "needs_reauth"
    DISABLED = "disabled"


class ConnectedAccount(TenantMixin, Base):
    """A social account a workspace publishes to, through a connector."""

    __tablename__ = "connected_accounts"

    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    connector: Mapped[str] = mapped_column(String(20), nullable=False)
    handle: Mapped[str] = mapped_column(String(200), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=AccountStatus.ACTIVE)
    status_reason: Mapped[str | None] = mapped_column(Text)
    # Non-secret connector settings (instance URL, chat id, sandbox behaviour).
    options: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    # Tokens, encrypted with Fernet; never returned by the API.
    secrets_encrypted: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_connected_accounts_tenant_platform", "workspace_id", "livemode", "platform"),
    )


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
