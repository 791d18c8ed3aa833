"""Competitor tracking: the competitors a workspace follows (`Competitor`, at most 20
a mode), their handles on the platforms (`CompetitorHandle`, one competitor per
handle in a mode, each with its own reading cursor and follower count), their public
posts (`CompetitorPost`, read from their public profiles or found by listening), and
the figures the insights read (`CompetitorDaily`, a competitor's day, and
`CompetitorTotals`, its running totals), kept by every ingest of posts and every
reading of followers, so that a range of days is two rows per competitor rather than
every post."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class Competitor(TenantMixin, LeasedMixin, Base):
    """A competitor: its name, handles ([{platform, handle}] as given), website and
    notes, and what the periodic refresh of its public profiles last found: its
    followers across its handles (null until read), when it ran and what failed. The
    refresh leases the competitor (LeasedMixin) and takes it again at
    `next_refresh_at` (null: due now)."""

    __tablename__ = "competitors"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    handles: Mapped[list] = mapped_column(JSON, nullable=False)
    website: Mapped[str | None] = mapped_column(String(2048))
    notes: Mapped[str | None] = mapped_column(Text)
    followers: Mapped[int | None] = mapped_column(BigInteger)
    last_refreshed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_refresh_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_competitors_tenant_created", "workspace_id", "livemode", "created_at"),
        Index("ix_competitors_tenant_name", "workspace_id", "livemode", "name", "id"),
        Index("ix_competitors_refresh_due", "next_refresh_at"),
    )


class CompetitorHandle(Base):
    """One handle of a competitor, compared as `handle_key` (folded, without its
    leading `@`: the form listening's signal authors are matched in), kept to one
    competitor of a workspace's mode. The refresh keeps where its reading of the
    handle's posts stopped (`cursor`), the followers it last read and its error."""

    __tablename__ = "competitor_handles"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    competitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("competitors.id", ondelete="CASCADE"), nullable=False
    )
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    handle: Mapped[str] = mapped_column(String(100), nullable=False)
    handle_key: Mapped[str] = mapped_column(String(200), nullable=False)
    cursor: Mapped[str | None] = mapped_column(String(500))
    followers: Mapped[int | None] = mapped_column(BigInteger)
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "platform", "handle_key", name="uq_competitor_handles_handle"),
        Index("ix_competitor_handles_key", "workspace_id", "livemode", "handle_key"),
        Index("ix_competitor_handles_competitor", "competitor_id"),
    )


class CompetitorPost(Base):
    """A public post of a competitor, once per (platform, external id): read from its
    profile (`source` "profile", with its likes, replies and reposts, updated by
    later readings) or a listening signal one of its handles wrote (`source`
    "listening", without counts until its profile is read)."""

    __tablename__ = "competitor_posts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    competitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("competitors.id", ondelete="CASCADE"), nullable=False
    )
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    external_id: Mapped[str] = mapped_column(String(255), nullable=False)
    handle: Mapped[str | None] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(10), nullable=False)
    content: Mapped[str] = mapped_column(Text, nullable=False)
    url: Mapped[str | None] = mapped_column(String(2048))
    posted_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    likes: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    comments: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    shares: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    engagements: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    followers_at_post: Mapped[int | None] = mapped_column(BigInteger)
    engagement_rate: Mapped[float | None] = mapped_column(Float)
    hashtags: Mapped[list] = mapped_column(JSON, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)

    __table_args__ = (
        UniqueConstraint("competitor_id", "platform", "external_id", name="uq_competitor_posts_external"),
        Index("ix_competitor_posts_competitor_posted", "competitor_id", "posted_at", "id"),
        # The breakout posts: those of a competitor above its threshold.
        Index("ix_competitor_posts_competitor_engagements", "competitor_id", "engagements"),
    )


class CompetitorDaily(Base):
    """One competitor's UTC day: its posts of the day, their engagements (and their
    squares), the sum of the engagement rates of those whose followers were known
    and how many, and its followers as last read that day (null: not read that day).
    The comparison's daily series read these."""

    __tablename__ = "competitor_daily"

    competitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("competitors.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    posts: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    engagements: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    engagements_squared: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    rate_sum: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    rated_posts: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    followers: Mapped[int | None] = mapped_column(BigInteger)


class CompetitorTotals(Base):
    """A competitor's running totals: the figures of all its posts posted on `day` or
    before (posts, engagements and their squares, the rates' sum and how many were
    rated, and the posts and engagements by UTC weekday and hour, `slots`:
    {"0-9": [posts, engagements]}, and by hashtag, `hashtags`: {"launch": [posts,
    engagements]}). A row is kept for each day a change touched; the totals at a day
    are those of the latest row on or before it, so any range's figures are the
    difference of two rows per competitor (socialpub.competitors.totals)."""

    __tablename__ = "competitor_totals"

    competitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("competitors.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    posts: Mapped[int] = mapped_column(BigInteger, nullable=False)
    engagements: Mapped[int] = mapped_column(BigInteger, nullable=False)
    engagements_squared: Mapped[float] = mapped_column(Float, nullable=False)
    rate_sum: Mapped[float] = mapped_column(Float, nullable=False)
    rated_posts: Mapped[int] = mapped_column(BigInteger, nullable=False)
    slots: Mapped[dict] = mapped_column(JSON, nullable=False)
    hashtags: Mapped[dict] = mapped_column(JSON, nullable=False)
