"""Link-in-bio records: pages (served publicly at /p/<slug>), their blocks, and the
counts their analytics read. Views and clicks are not stored one by one: the public
page buffers them (socialpub.linkinbio.counting) and a claimed flush adds them here,
by UTC day. A visitor is a hash (of a salt that changes every day, the page, the
address and the user agent); addresses themselves are never stored."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import Date, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin
from persistence.types import UtcDateTime


class PageStatus(enum.StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"


class BlockType(enum.StrEnum):
    LINK = "link"
    HEADER = "header"
    TEXT = "text"
    IMAGE = "image"
    SOCIAL = "social"
    EMAIL = "email"


class LinkPage(TenantMixin, Base):
    """A page. `slug` is unique across the service (both modes: a test page is served
    at /p/test/<slug>, a live one at /p/<slug>). `revision` grows with every change, so
    a process's rendered copy knows when it is stale."""

    __tablename__ = "linkinbio_pages"

    slug: Mapped[str] = mapped_column(String(40), nullable=False, unique=True)
    title: Mapped[str] = mapped_column(String(100), nullable=False)
    bio: Mapped[str | None] = mapped_column(Text)
    avatar_upload_key: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    theme_preset: Mapped[str] = mapped_column(String(16), nullable=False, default="light")
    accent_color: Mapped[str] = mapped_column(String(7), nullable=False, default="#1a56db")
    status: Mapped[str] = mapped_column(String(16), nullable=False, default=PageStatus.DRAFT)
    published_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    revision: Mapped[int] = mapped_column(Integer, nullable=False, default=1)

    __table_args__ = (Index("ix_linkinbio_pages_tenant_created", "workspace_id", "livemode", "created_at", "id"),)

    @property
    def theme(self) -> dict:
        return {"preset": self.theme_preset, "accent_color": self.accent_color}

    @property
    def public_path(self) -> str:
        """Where the page is served once published: test-mode pages only under /p/test/."""
        return f"/p/{self.slug}" if self.livemode else f"/p/test/{self.slug}"


class LinkBlock(TenantMixin, Base):
    """A block of a page, at `position` (0, 1, ... dense in its page)."""

    __tablename__ = "linkinbio_blocks"

    page_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_pages.id", ondelete="CASCADE"),
                                               nullable=False)
    type: Mapped[str] = mapped_column(String(16), nullable=False)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    title: Mapped[str | None] = mapped_column(String(200))
    url: Mapped[str | None] = mapped_column(String(2048))
    text: Mapped[str | None] = mapped_column(Text)
    upload_key: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    email: Mapped[str | None] = mapped_column(String(254))

    __table_args__ = (Index("ix_linkinbio_blocks_page_position", "page_id", "position"),)


class LinkPageDay(Base):
    """A page's views and clicks of one UTC day."""

    __tablename__ = "linkinbio_page_days"

    page_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_pages.id", ondelete="CASCADE"),
                                               primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    views: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    visitors: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    clicks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    unique_clicks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class LinkVisitor(Base):
    """One visitor of a page on a UTC day (a hash), with the time of the last view
    counted (a view within 15 minutes of it is not counted again)."""

    __tablename__ = "linkinbio_visitors"

    page_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_pages.id", ondelete="CASCADE"),
                                               primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    visitor: Mapped[str] = mapped_column(String(32), primary_key=True)
    last_view_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)


class LinkBlockDay(Base):
    """A block's clicks of one UTC day, and how many visitors clicked it."""

    __tablename__ = "linkinbio_block_days"

    block_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_blocks.id", ondelete="CASCADE"),
                                                primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    page_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, index=True)
    clicks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    unique_clicks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class LinkClicker(Base):
    """A visitor who clicked a block on a UTC day (for the unique clicks)."""

    __tablename__ = "linkinbio_clickers"

    block_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_blocks.id", ondelete="CASCADE"),
                                                primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    visitor: Mapped[str] = mapped_column(String(32), primary_key=True)


class LinkReferrer(Base):
    """A page's views of one UTC day by referring host (`direct` without one)."""

    __tablename__ = "linkinbio_referrers"

    page_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("linkinbio_pages.id", ondelete="CASCADE"),
                                               primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    referrer: Mapped[str] = mapped_column(String(255), primary_key=True)
    views: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class LinkSalt(Base):
    """The salt of one UTC day's visitor hashes, random, removed two days later."""

    __tablename__ = "linkinbio_salts"

    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    salt: Mapped[str] = mapped_column(String(64), nullable=False)


class LinkFlush(Base):
    """A flush of buffered views and clicks that was added (its claim's token): a
    claim taken again after a crash finds it and adds nothing twice."""

    __tablename__ = "linkinbio_flushes"

    token: Mapped[str] = mapped_column(String(36), primary_key=True)
    flushed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False, index=True)
