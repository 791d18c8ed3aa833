"""The AI assistant's records: the workspace's brand context and its conversations."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin, TimestampedMixin
from persistence.types import UtcDateTime


class MessageRole(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class BrandContext(TimestampedMixin, Base):
    """How the workspace's brand writes: one per workspace, shared by both modes (it
    describes the brand, not test or live data)."""

    __tablename__ = "brand_contexts"

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    voice: Mapped[str] = mapped_column(Text, nullable=False, default="")
    audience: Mapped[str] = mapped_column(Text, nullable=False, default="")
    banned_words: Mapped[list[str]] = mapped_column(JSON, nullable=False, default=list)
    hashtags: Mapped[list[str]] = mapped_column(JSON, nullable=False, default=list)
    sample_posts: Mapped[list[str]] = mapped_column(JSON, nullable=False, default=list)


class Conversation(TenantMixin, Base):
    """A thread between a workspace member and the assistant, in one mode: a test-mode
    conversation is never visible in live mode, as with every tenant record."""

    __tablename__ = "ai_conversations"

    # The opening of the first message, so a list of conversations is readable.
    title: Mapped[str] = mapped_column(String(200), nullable=False)
    last_message_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)

    __table_args__ = (Index("ix_ai_conversations_workspace_created", "workspace_id", "livemode", "created_at", "id"),)


class ConversationMessage(TenantMixin, Base):
    """One turn of a conversation. The user's message and the assistant's reply are
    written together, with the same timestamp, so `position` is what orders them; its
    uniqueness also makes two concurrent replies to one conversation collide rather
    than interleave."""

    __tablename__ = "ai_messages"

    conversation_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("ai_conversations.id", ondelete="CASCADE"), nullable=False
    )
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    role: Mapped[str] = mapped_column(String(20), nullable=False)
    content: Mapped[str] = mapped_column(Text, nullable=False)
    # The reply's post drafts, as `[{"platform": ..., "content": ...}]`; null for none.
    drafts: Mapped[list[dict] | None] = mapped_column(JSON)

    __table_args__ = (
        UniqueConstraint("conversation_id", "position", name="uq_ai_messages_conversation_position"),
    )
