"""Content templates with `{{variable}}` placeholders, the collections that group them
and the hashtag sets they append."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin
from persistence.types import UtcDateTime


class TemplateKind(enum.StrEnum):
    # A post's content.
    CONTENT = "content"
    # The text an auto-reply rule sends (listed by GET /auto-reply/templates).
    REPLY = "reply"


class TemplateCollection(TenantMixin, Base):
    __tablename__ = "template_collections"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    description: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "name", name="uq_template_collections_tenant_name"),
        Index("ix_template_collections_tenant_created", "workspace_id", "livemode", "created_at"),
    )


class HashtagSet(TenantMixin, Base):
    """Hashtags kept without `#`, lower-cased and deduplicated, in the order given."""

    __tablename__ = "hashtag_sets"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    hashtags: Mapped[list] = mapped_column(JSON, nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "name", name="uq_hashtag_sets_tenant_name"),
        Index("ix_hashtag_sets_tenant_created", "workspace_id", "livemode", "created_at"),
    )


class Template(TenantMixin, Base):
    __tablename__ = "templates"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    kind: Mapped[str] = mapped_column(String(20), nullable=False, default=TemplateKind.CONTENT)
    content: Mapped[str] = mapped_column(Text, nullable=False)
    # [{name, required, default, description}], in the order declared.
    variables: Mapped[list] = mapped_column(JSON, nullable=False)
    collection_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("template_collections.id", ondelete="SET NULL")
    )
    platforms: Mapped[list] = mapped_column(JSON, nullable=False)
    # Ids of the workspace's hashtag sets, as strings; a deleted set is skipped on use.
    hashtag_set_ids: Mapped[list] = mapped_column(JSON, nullable=False)
    usage_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "name", name="uq_templates_tenant_name"),
        Index("ix_templates_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_templates_collection", "collection_id"),
    )
