"""Connected social accounts."""
from __future__ import annotations

import enum

from sqlalchemy import JSON, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin


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
