"""Analytics records: what each published target and each account measured, as time
series (one row per bucket), and the latest reading of each, which the reports read
and the snapshot job schedules from."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Index, Integer, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class TrackedPost(TenantMixin, LeasedMixin, Base):
    """A published target analytics follows for 90 days: its latest counts (lifetime
    totals, as the platform reported them at `captured_at`) and when it is next
    measured. The snapshot job claims due rows with a lease (LeasedMixin)."""

    __tablename__ = "analytics_posts"

    target_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("post_targets.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    post_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False)
    account_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False
    )
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    published_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    # The UTC day of published_at: what the daily series group by, on every database.
    published_day: Mapped[dt.date] = mapped_column(Date, nullable=False)
    content_length: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    followers_at_post: Mapped[int | None] = mapped_column(Integer)
    impressions: Mapped[int | None] = mapped_column(Integer)
    reach: Mapped[int | None] = mapped_column(Integer)
    clicks: Mapped[int | None] = mapped_column(Integer)
    likes: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    comments: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    shares: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    engagements: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # What the engagement rate divides by (impressions where reported, else followers
    # at post time), and the engagements of a post that has one: summed, they give
    # the rate of any set of posts.
    rate_denominator: Mapped[int | None] = mapped_column(Integer)
    rated_engagements: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    engagement_rate: Mapped[float | None] = mapped_column(Float)
    captured_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    next_due_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    error_code: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (
        Index("ix_analytics_posts_tenant_published", "workspace_id", "livemode", "published_at"),
        Index("ix_analytics_posts_due", "next_due_at"),
        # The top posts by the default metric walk this index from the top, stopping
        # at the limit, rather than sorting every post of the period.
        Index("ix_analytics_posts_tenant_engagements", "workspace_id", "livemode", "engagements", "published_at", "id"),
        Index("ix_analytics_posts_account", "account_id"),
        # A post's targets: read and locked when one of them is measured (the daily
        # rollups), and when the post is deleted.
        Index("ix_analytics_posts_post", "post_id"),
    )


# The list of measured posts, newest first (socialpub.analytics.service.list_post_metrics):
# its pages' ids and its count read this index alone.
Index(
    "ix_analytics_posts_tenant_newest", TrackedPost.workspace_id, TrackedPost.livemode,
    TrackedPost.published_at.desc().nulls_last(), TrackedPost.id,
    postgresql_where=TrackedPost.captured_at.is_not(None), sqlite_where=TrackedPost.captured_at.is_not(None),
)


class PostSnapshot(TenantMixin, Base):
    """A target's counts in one time bucket: hourly for the first 48 hours after it was
    published, daily after. One row per (target, bucket)."""

    __tablename__ = "analytics_post_snapshots"

    target_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("post_targets.id", ondelete="CASCADE"), nullable=False
    )
    bucket_start: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    captured_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    impressions: Mapped[int | None] = mapped_column(Integer)
    reach: Mapped[int | None] = mapped_column(Integer)
    clicks: Mapped[int | None] = mapped_column(Integer)
    likes: Mapped[int] = mapped_column(Integer, nullable=False)
    comments: Mapped[int] = mapped_column(Integer, nullable=False)
    shares: Mapped[int] = mapped_column(Integer, nullable=False)

    __table_args__ = (
        UniqueConstraint("target_id", "bucket_start", name="uq_analytics_post_snapshots_bucket"),
    )


class TrackedAccount(TenantMixin, LeasedMixin, Base):
    """A connected account analytics follows: its latest followers, when they are
    next measured, and until when the platform asked us to leave it alone."""

    __tablename__ = "analytics_accounts"

    account_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    followers: Mapped[int | None] = mapped_column(Integer)
    captured_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    next_due_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    # A platform that rate limited us (429, Retry-After): nothing of this account is
    # asked for before then.
    paused_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    error_code: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (
        Index("ix_analytics_accounts_due", "next_due_at"),
        Index("ix_analytics_accounts_tenant", "workspace_id", "livemode"),
    )


class FollowerSnapshot(TenantMixin, Base):
    """An account's followers on one UTC day. One row per (account, day)."""

    __tablename__ = "analytics_follower_snapshots"

    account_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="CASCADE"), nullable=False
    )
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    bucket_start: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    captured_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    followers: Mapped[int] = mapped_column(Integer, nullable=False)

    __table_args__ = (
        UniqueConstraint("account_id", "bucket_start", name="uq_analytics_follower_snapshots_bucket"),
        Index("ix_analytics_follower_snapshots_tenant", "workspace_id", "livemode", "bucket_start"),
    )


class DailyRollup(TenantMixin, Base):
    """The sums of the latest readings of the targets published on one UTC day, per
    platform and for all platforms together (`platform` "*"), kept current by the
    snapshot job (and a post's deletion): what the overview reads instead of every
    target of a period."""

    __tablename__ = "analytics_daily"

    day: Mapped[dt.date] = mapped_column(Date, nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    # Distinct posts (a post to several accounts of the day counts once).
    posts: Mapped[int] = mapped_column(Integer, nullable=False)
    impressions: Mapped[int] = mapped_column(BigInteger, nullable=False)
    reach: Mapped[int] = mapped_column(BigInteger, nullable=False)
    clicks: Mapped[int] = mapped_column(BigInteger, nullable=False)
    likes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    comments: Mapped[int] = mapped_column(BigInteger, nullable=False)
    shares: Mapped[int] = mapped_column(BigInteger, nullable=False)
    engagements: Mapped[int] = mapped_column(BigInteger, nullable=False)
    rated_engagements: Mapped[int] = mapped_column(BigInteger, nullable=False)
    rate_denominator: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "day", "platform", name="uq_analytics_daily_day_platform"),
    )
