"""Auto-reply rules, the notification cursor of each account they listen on, and every
incoming message they saw (answered or not)."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class MatchMode(enum.StrEnum):
    ANY = "any"
    ALL = "all"
    EXACT = "exact"
    WHOLE_WORD = "wholeWord"


class MessageType(enum.StrEnum):
    COMMENT = "comment"
    MENTION = "mention"
    DM = "dm"


class FrequencyMode(enum.StrEnum):
    EVERY_TIME = "everyTime"
    ONCE_PER_AUTHOR = "oncePerAuthor"


class MessageStatus(enum.StrEnum):
    REPLIED = "replied"
    # No enabled rule matched, or the matching rule had already answered this author.
    UNANSWERED = "unanswered"
    # Our own account wrote it: never answered, so two auto-replies never talk forever.
    OWN = "own"
    FAILED = "failed"


class AutoReplyRule(TenantMixin, Base):
    __tablename__ = "autoreply_rules"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    priority: Mapped[int] = mapped_column(Integer, nullable=False, default=100)
    platforms: Mapped[list] = mapped_column(JSON, nullable=False)
    message_types: Mapped[list] = mapped_column(JSON, nullable=False)
    # {keywords: [...], match, exclude_keywords: [...], pattern}
    trigger: Mapped[dict] = mapped_column(JSON, nullable=False)
    reply_text: Mapped[str | None] = mapped_column(Text)
    # A built-in reply template's name, or the id of a workspace template of kind reply.
    reply_template_id: Mapped[str | None] = mapped_column(String(100))
    frequency_mode: Mapped[str] = mapped_column(String(20), nullable=False, default=FrequencyMode.EVERY_TIME)
    frequency_window_hours: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        Index("ix_autoreply_rules_tenant_priority", "workspace_id", "livemode", "enabled", "priority"),
        Index("ix_autoreply_rules_tenant_created", "workspace_id", "livemode", "created_at"),
        # The rules in the order they are listed and tried.
        Index("ix_autoreply_rules_tenant_order", "workspace_id", "livemode", "priority", "created_at", "id"),
    )


class AutoReplyCursor(TenantMixin, LeasedMixin, Base):
    """Where the notifications poll of one account stands. A poll holds the row through
    a lease and a token (socialpub.claims), so two workers never read one account's
    notifications at once."""

    __tablename__ = "autoreply_cursors"

    account_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False
    )
    # The platform's own position (Bluesky's cursor, Mastodon's newest notification id).
    cursor: Mapped[str | None] = mapped_column(String(500))
    # When the first poll read the account's backlog: the backlog itself is never
    # answered, so enabling auto-reply does not answer weeks-old comments.
    primed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    next_poll_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_polled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (UniqueConstraint("account_id", name="uq_autoreply_cursors_account"),)


class AutoReplyMessage(TenantMixin, Base):
    """An incoming comment or mention, seen once per account (its platform id is
    unique per account), with the reply it got."""

    __tablename__ = "autoreply_messages"

    account_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False
    )
    platform: Mapped[str] = mapped_column(String(40), nullable=False)
    external_id: Mapped[str] = mapped_column(String(500), nullable=False)
    message_type: Mapped[str] = mapped_column(String(20), nullable=False)
    author: Mapped[str | None] = mapped_column(String(500))
    author_id: Mapped[str | None] = mapped_column(String(500))
    text: Mapped[str] = mapped_column(Text, nullable=False)
    received_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    rule_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("autoreply_rules.id", ondelete="SET NULL")
    )
    reason: Mapped[str | None] = mapped_column(Text)
    reply_text: Mapped[str | None] = mapped_column(Text)
    reply_external_id: Mapped[str | None] = mapped_column(String(500))
    replied_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        UniqueConstraint("account_id", "external_id", name="uq_autoreply_messages_account_message"),
        Index("ix_autoreply_messages_rule_author", "rule_id", "author_id", "replied_at"),
        Index("ix_autoreply_messages_tenant_author", "workspace_id", "livemode", "author"),
    )
