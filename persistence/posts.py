"""Posts, their per-account targets (the publishing pipeline's truth) and first comments."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import (
    JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid, text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.accounts import ConnectedAccount
from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class PostStatus(enum.StrEnum):
    """A draft has no targets; a scheduled post has one per account it goes to, and
    becomes published or failed from what happened to them."""

    DRAFT = "draft"
    SCHEDULED = "scheduled"
    PUBLISHED = "published"
    FAILED = "failed"


class TargetStatus(enum.StrEnum):
    PENDING = "pending"
    PUBLISHING = "publishing"  # claimed: a job holds it with a lease
    PUBLISHED = "published"
    FAILED = "failed"


class CommentStatus(enum.StrEnum):
    """A post's first comment on one of its targets (None: nothing to post there)."""

    PENDING = "pending"
    POSTING = "posting"  # claimed: a job holds it with a lease
    POSTED = "posted"
    FAILED = "failed"


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
        # Every post newest first (archived ones included); the id ends it so that a
        # page's ids are read from the index alone.
        Index("ix_posts_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        # What lists show by default (not archived), newest first; counting them is
        # an index-only scan.
        Index(
            "ix_posts_tenant_visible", "workspace_id", "livemode", "created_at", "id",
            postgresql_where=text("archived_at IS NULL"), sqlite_where=text("archived_at IS NULL"),
        ),
        # A status's posts newest first: its pages (deep ones too) read the index in
        # the list's order instead of sorting every post of that status, and find
        # their ids, archived or not, in the index alone.
        Index("ix_posts_tenant_status", "workspace_id", "livemode", "status", "created_at", "id", "archived_at"),
        # Due posts in the order the sweep for unsettled ones reads them.
        Index("ix_posts_due", "status", "scheduled_at", "id"),
    )


class PostCounter(Base):
    """How many posts a workspace's mode has in each status, archived or not: the
    exact `totalItems` of the posts list, read without counting rows.

    Kept by triggers on `posts` (migration 0027, on PostgreSQL and SQLite alike) in
    the transaction that writes the post, whatever writes it: a service, a bulk
    operation, the publishing pipeline, another area through `add_post`, a raw
    statement. A counter is the sum of its rows (`slot`s). On PostgreSQL a change
    adds its +1 or -1 to whichever row of its counter no other transaction holds, or
    to a new row when all are held: thousands of publishing transactions settling
    posts of one workspace at once never wait for each other on a counter (nor
    deadlock), and a counter has as many rows as it had writers at one moment. A
    single row may hold a negative value; only the sum is a count. SQLite, with one
    writer at a time, keeps one row (slot 0)."""

    __tablename__ = "post_counters"

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    livemode: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    status: Mapped[str] = mapped_column(String(20), primary_key=True)
    archived: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    slot: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    count: Mapped[int] = mapped_column(BigInteger, nullable=False)


class PostTarget(TenantMixin, LeasedMixin, Base):
    """One (platform, connected account) a post goes to, and what happened there.

    The pipeline's truth: the dispatcher claims due targets with a lease and a claim
    token (LeasedMixin); a job that does not hold the current token does nothing, and a target the
    platform accepted is recorded as published before anything else happens to it.
    The same columns prefixed `comment_` (a lease and token of their own included)
    track the post's first comment on it.
    """

    __tablename__ = "post_targets"

    post_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False)
    account_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="pending")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
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
        # Claims whose lease ran out, found without reading every claim held.
        Index("ix_post_targets_lease", "status", "lease_until"),
        Index("ix_post_targets_comment_lease", "comment_status", "comment_lease_until"),
    )


class FirstComment(TenantMixin, Base):
    """The comment posted under a post on each platform that supports replies."""

    __tablename__ = "first_comments"

    post_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    content: Mapped[str] = mapped_column(Text, nullable=False)

    post: Mapped[Post] = relationship(back_populates="first_comment")
