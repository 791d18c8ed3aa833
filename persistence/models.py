"""Typed SQLAlchemy 2 models.

Tenant tables carry `workspace_id` and `livemode`; services reach them only through
`socialpub.tenancy.TenantScope`, which always filters on both.
"""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint, Uuid, text
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
    status_reason: Mapped[str | None] = mapped_column(Text)
    # Non-secret connector settings (instance URL, chat id, sandbox behaviour).
    options: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    # Tokens, encrypted with Fernet; never returned by the API.
    secrets_encrypted: Mapped[str | None] = mapped_column(Text)

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

    targets: Mapped[list["PostTarget"]] = relationship(
        back_populates="post", cascade="all, delete-orphan", passive_deletes=True,
        order_by="(PostTarget.platform, PostTarget.created_at)",
    )
    first_comment: Mapped["FirstComment | None"] = relationship(
        back_populates="post", cascade="all, delete-orphan", passive_deletes=True, uselist=False
    )

    __table_args__ = (
        Index("ix_posts_tenant_created", "workspace_id", "livemode", "created_at"),
        # What lists show by default (not archived), newest first; counting them is
        # an index-only scan.
        Index(
            "ix_posts_tenant_visible", "workspace_id", "livemode", "created_at", "id",
            postgresql_where=text("archived_at IS NULL"), sqlite_where=text("archived_at IS NULL"),
        ),
        Index("ix_posts_tenant_status", "workspace_id", "livemode", "status"),
        Index("ix_posts_due", "status", "scheduled_at"),
    )


class PostTarget(TenantMixin, Base):
    """One (platform, connected account) a post goes to, and what happened there.

    The pipeline's truth: the dispatcher claims due targets with a lease and a claim
    token; a job that does not hold the current token does nothing, and a target the
    platform accepted is recorded as published before anything else happens to it.
    The same columns prefixed `comment_` track the post's first comment on it.
    """

    __tablename__ = "post_targets"

    post_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False)
    account_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="pending")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    claim_token: Mapped[str | None] = mapped_column(String(36))
    external_id: Mapped[str | None] = mapped_column(String(500))
    url: Mapped[str | None] = mapped_column(String(1000))
    reference: Mapped[dict | None] = mapped_column(JSON)
    error_code: Mapped[str | None] = mapped_column(String(100))
    error_message: Mapped[str | None] = mapped_column(Text)
    published_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    comment_status: Mapped[str | None] = mapped_column(String(20))
    comment_attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    comment_next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    comment_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    comment_claim_token: Mapped[str | None] = mapped_column(String(36))
    comment_external_id: Mapped[str | None] = mapped_column(String(500))
    comment_url: Mapped[str | None] = mapped_column(String(1000))
    comment_error_code: Mapped[str | None] = mapped_column(String(100))
    comment_error_message: Mapped[str | None] = mapped_column(Text)
    comment_posted_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    post: Mapped[Post] = relationship(back_populates="targets")
    account: Mapped[ConnectedAccount] = relationship()

    __table_args__ = (
        UniqueConstraint("post_id", "account_id", name="uq_post_targets_post_account"),
        Index("ix_post_targets_due", "status", "next_attempt_at"),
        Index("ix_post_targets_comment_due", "comment_status", "comment_next_attempt_at"),
    )


class FirstComment(TenantMixin, Base):
    """The comment posted under a post on each platform that supports replies."""

    __tablename__ = "first_comments"

    post_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    content: Mapped[str] = mapped_column(Text, nullable=False)

    post: Mapped[Post] = relationship(back_populates="first_comment")


class Event(TenantMixin, Base):
    """The outbox: written in the same transaction as the change it reports, and
    delivered to webhook endpoints later."""

    __tablename__ = "events"

    type: Mapped[str] = mapped_column(String(50), nullable=False)
    data: Mapped[dict] = mapped_column(JSON, nullable=False)

    __table_args__ = (Index("ix_events_tenant_created", "workspace_id", "livemode", "created_at"),)


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


class EncryptionKeyCheck(Base):
    """One row: a Fernet token of a known value, written by the first process to start
    with the keys it runs with, and re-encrypted with the newest key once one is
    added. A process whose keys cannot read it could not read the account secrets
    either, and refuses to start (socialpub.crypto.verify_keys)."""

    __tablename__ = "encryption_key_checks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    token: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow, nullable=False)


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


class BulkOperation(TenantMixin, Base):
    """One bulk request: an action over up to 500 posts, run by workers in chunks.

    `entries` are the request's posts in order; `processed` is how many of them have
    been applied or refused, and advances in the same transaction as their effects,
    so it is also where a run resumes. A run holds the operation through a lease and
    a token, as publishing jobs hold their targets: a worker that dies leaves a lease
    that runs out, and the next run carries on from `processed`."""

    __tablename__ = "bulk_operations"

    action: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="pending")
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
    lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    claim_token: Mapped[str | None] = mapped_column(String(36))
    cancel_requested_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    item_errors: Mapped[list["BulkItemError"]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="BulkItemError.position",
    )

    __table_args__ = (
        Index("ix_bulk_operations_tenant_created", "workspace_id", "livemode", "created_at"),
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


# Models of other domains live in their own modules; importing them here puts every
# table in Base.metadata for migrations and their checks.
from persistence import members, webhooks  # noqa: E402,F401
