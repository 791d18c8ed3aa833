"""The content calendar: a workspace's calendar preferences, slot reservations, comments
on posts and dates, and the activity feed."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, Date, ForeignKey, Index, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.models import Base, TenantMixin
from persistence.posts import Post
from persistence.types import UtcDateTime


class ReservationStatus(enum.StrEnum):
    HELD = "held"
    CONVERTED = "converted"


class CalendarPreferences(TenantMixin, Base):
    """One document per workspace and mode; a workspace without one has the defaults."""

    __tablename__ = "calendar_preferences"

    timezone: Mapped[str] = mapped_column(String(64), nullable=False)
    week_start: Mapped[str] = mapped_column(String(10), nullable=False)
    default_view: Mapped[str] = mapped_column(String(10), nullable=False)
    # [{"weekday": "monday", "time": "09:00", "platforms": [...]}], local to `timezone`.
    slots: Mapped[list] = mapped_column(JSON, nullable=False)
    working_hours_start: Mapped[str | None] = mapped_column(String(5))
    working_hours_end: Mapped[str | None] = mapped_column(String(5))

    __table_args__ = (UniqueConstraint("workspace_id", "livemode", name="uq_calendar_preferences_tenant"),)


class CalendarReservation(TenantMixin, Base):
    __tablename__ = "calendar_reservations"

    starts_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    platforms: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    title: Mapped[str] = mapped_column(String(200), nullable=False)
    note: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=ReservationStatus.HELD)
    created_by: Mapped[str] = mapped_column(String(200), nullable=False)
    post_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="SET NULL"))
    converted_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    holds: Mapped[list["CalendarSlotHold"]] = relationship(cascade="all, delete-orphan", passive_deletes=True)
    # Set with the new post, in the conversion's transaction: the flush inserts the post first.
    post: Mapped[Post | None] = relationship(Post, passive_deletes=True)

    __table_args__ = (Index("ix_calendar_reservations_tenant_starts", "workspace_id", "livemode", "starts_at"),)


class CalendarSlotHold(Base):
    """One (minute, platform) a held reservation occupies. The unique constraint is what
    makes two concurrent reservations of one minute on one platform impossible: the
    service checks first for a readable refusal, and the database settles a race."""

    __tablename__ = "calendar_slot_holds"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    reservation_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("calendar_reservations.id", ondelete="CASCADE"), nullable=False
    )
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(nullable=False)
    minute: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "minute", "platform", name="uq_calendar_slot_holds_minute"),
    )


class CalendarComment(TenantMixin, Base):
    """A comment on a post (removed with it) or on a calendar date."""

    __tablename__ = "calendar_comments"

    post_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="CASCADE"))
    date: Mapped[dt.date | None] = mapped_column(Date)
    body: Mapped[str] = mapped_column(Text, nullable=False)
    author: Mapped[str] = mapped_column(String(200), nullable=False)
    mentions: Mapped[list[str]] = mapped_column(JSON, nullable=False)

    __table_args__ = (
        Index("ix_calendar_comments_tenant_post", "workspace_id", "livemode", "post_id", "created_at"),
        Index("ix_calendar_comments_tenant_date", "workspace_id", "livemode", "date", "created_at"),
        Index("ix_calendar_comments_tenant_created", "workspace_id", "livemode", "created_at", "id"),
    )


class CalendarActivity(TenantMixin, Base):
    """One entry of the append-only activity feed, written in the transaction of the
    change it reports. It names its subject by id without a foreign key: the history of
    a deleted post stays."""

    __tablename__ = "calendar_activity"

    type: Mapped[str] = mapped_column(String(40), nullable=False)
    subject_type: Mapped[str] = mapped_column(String(20), nullable=False)
    subject_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    post_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    actor: Mapped[str | None] = mapped_column(String(200))
    summary: Mapped[str] = mapped_column(String(200), nullable=False)
    scheduled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    previous_scheduled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_calendar_activity_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_calendar_activity_tenant_type", "workspace_id", "livemode", "type", "created_at"),
    )
