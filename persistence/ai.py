"""The AI assistant's records: the workspace's brand context."""
from __future__ import annotations

import uuid

from sqlalchemy import JSON, ForeignKey, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TimestampedMixin


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
