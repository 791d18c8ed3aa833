"""API keys and their secret values (a key keeps its old value for a grace period after a roll)."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.workspaces import Workspace
from persistence.models import Base, TenantMixin, TimestampedMixin
from persistence.types import UtcDateTime


class ApiKey(TenantMixin, Base):
    """A named key with scopes and limits. Its secret values live in ApiKeySecret so
    that a roll can keep the previous value working for a grace period."""

    __tablename__ = "api_keys"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    scopes: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    per_minute: Mapped[int | None] = mapped_column(Integer)
    per_day: Mapped[int | None] = mapped_column(Integer)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    workspace: Mapped[Workspace] = relationship(lazy="joined")
    secrets: Mapped[list["ApiKeySecret"]] = relationship(
        back_populates="api_key", cascade="all, delete-orphan", order_by="ApiKeySecret.created_at"
    )

    __table_args__ = (Index("ix_api_keys_workspace", "workspace_id", "livemode"),)


class ApiKeySecret(TimestampedMixin, Base):
    """One value of a key. Only the SHA-256 of the value is stored: values carry 190+
    bits of randomness, so a fast hash is safe and keeps authentication cheap."""

    __tablename__ = "api_key_secrets"

    api_key_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("api_keys.id", ondelete="CASCADE"), nullable=False, index=True
    )
    secret_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    visible_prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    # Null while this is the key's current value; set when the key is rolled.
    expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    api_key: Mapped[ApiKey] = relationship(back_populates="secrets")


class ApiKeyRevision(Base):
    """One row (id 1) whose revision moves in the transaction of every revocation and
    roll: a process that finds it moved drops the keys it had resolved, so a revoked
    key stops working at its next request in every process, whoever revoked it."""

    __tablename__ = "api_key_revisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    revision: Mapped[int] = mapped_column(BigInteger, nullable=False)
