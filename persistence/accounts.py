"""Connected social accounts, and the OAuth authorizations that connect them."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, Index, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin
from persistence.types import UtcDateTime


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
    # An account connected through OAuth: the platform's id of what it publishes as
    # (connecting it again updates this row), when its access token expires, and when
    # it is to be refreshed (null: it has no refresh token). One refresh at a time: a
    # refresher holds `refresh_claim_token` until `refresh_lease_until`.
    external_id: Mapped[str | None] = mapped_column(String(200))
    token_expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    refresh_due_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    refresh_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    refresh_claim_token: Mapped[str | None] = mapped_column(String(36))

    __table_args__ = (
        Index("ix_connected_accounts_tenant_platform", "workspace_id", "livemode", "platform", "created_at", "id"),
        Index("ix_connected_accounts_refresh_due", "refresh_due_at"),
    )


class AuthorizationStatus(enum.StrEnum):
    # Waiting for the platform to send the user back.
    PENDING = "pending"
    # The tokens were granted for several identities (a user's Facebook pages): the
    # operator picks the one to connect.
    CHOOSING = "choosing"
    DONE = "done"


class OAuthAuthorization(TenantMixin, Base):
    """An authorization started from the dashboard or the CLI: its `state` (single
    use, expiring), the PKCE verifier, and whom it is bound to (a member's dashboard
    session, or the CLI). Always live mode: test mode has the sandbox."""

    __tablename__ = "oauth_authorizations"

    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    state: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    verifier_encrypted: Mapped[str | None] = mapped_column(Text)
    bound_to: Mapped[str] = mapped_column(String(100), nullable=False)
    created_by: Mapped[str] = mapped_column(String(200), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=AuthorizationStatus.PENDING)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    # The granted tokens and the identities to choose from, encrypted, while CHOOSING.
    choices_encrypted: Mapped[str | None] = mapped_column(Text)
    # The account it connected, once done.
    account_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)

    __table_args__ = (Index("ix_oauth_authorizations_expires", "expires_at"),)
