"""Typed SQLAlchemy 2 models.

Tenant tables carry `workspace_id` and `livemode`; services reach them only through
`socialpub.tenancy.TenantScope`, which always filters on both.
"""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from persistence.types import UtcDateTime, utcnow


class Base(DeclarativeBase):
    pass


class TimestampedMixin:
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow, nullable=False)


class TenantMixin(TimestampedMixin):
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)


class Workspace(TimestampedMixin, Base):
    __tablename__ = "workspaces"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    plan: Mapped[str] = mapped_column(String(20), nullable=False)


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


class ConnectedAccount(TenantMixin, Base):
    """A social account a workspace publishes to, through a connector."""

    __tablename__ = "connected_accounts"

    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    connector: Mapped[str] = mapped_column(String(20), nullable=False)
    handle: Mapped[str] = mapped_column(String(200), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="active")

    __table_args__ = (
        Index("ix_connected_accounts_tenant_platform", "workspace_id", "livemode", "platform"),
    )


class Post(TenantMixin, Base):
    __tablename__ = "posts"

    content: Mapped[str] = mapped_column(Text, nullable=False)
    platforms: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    scheduled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    published_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    archived_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_posts_tenant_created", "workspace_id", "livemode", "created_at"),
        Index("ix_posts_tenant_status", "workspace_id", "livemode", "status"),
        Index("ix_posts_due", "status", "scheduled_at"),
    )
