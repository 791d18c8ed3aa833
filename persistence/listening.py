"""Social listening: the monitors a workspace keeps (keywords to look for, on which
platforms and in which languages), the signals ingested (posts found on the
platforms, with their sentiment computed on ingest) and which monitors each signal
matched (`ListeningSignalMonitor`, the link the monitor filter and the later reports
and stats read by monitor and day)."""
from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin
from persistence.types import UtcDateTime


class SentimentLabel(enum.StrEnum):
    POSITIVE = "positive"
    NEGATIVE = "negative"
    NEUTRAL = "neutral"


class ListeningMonitor(TenantMixin, Base):
    """What to listen for. A signal matches when it holds any of `keywords` (or there
    are none), every one of `required_keywords` and none of `excluded_keywords`, on one
    of `platforms` and in one of `languages` (empty: any). Keywords are kept as given
    (trimmed); socialpub.listening.matching normalises them when it compiles them."""

    __tablename__ = "listening_monitors"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    keywords: Mapped[list] = mapped_column(JSON, nullable=False)
    required_keywords: Mapped[list] = mapped_column(JSON, nullable=False)
    excluded_keywords: Mapped[list] = mapped_column(JSON, nullable=False)
    platforms: Mapped[list] = mapped_column(JSON, nullable=False)
    languages: Mapped[list] = mapped_column(JSON, nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    # Set by the periodic poll of the platforms (a later job): when it last ran for the
    # monitor and what went wrong, if anything.
    last_polled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_listening_monitors_tenant_created", "workspace_id", "livemode", "created_at"),
        Index("ix_listening_monitors_tenant_enabled", "workspace_id", "livemode", "enabled"),
    )


@dataclass(frozen=True)
class Sentiment:
    score: float
    label: str


class ListeningSignal(TenantMixin, Base):
    """A post found on a platform, once per (platform, external id) in a workspace's
    mode: an ingest of one already stored is a duplicate and changes nothing. Its
    sentiment and the monitors it matched are computed once, on ingest."""

    __tablename__ = "listening_signals"

    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    external_id: Mapped[str] = mapped_column(String(255), nullable=False)
    author: Mapped[str | None] = mapped_column(String(500))
    content: Mapped[str] = mapped_column(Text, nullable=False)
    url: Mapped[str | None] = mapped_column(String(2048))
    language: Mapped[str | None] = mapped_column(String(2))
    reach: Mapped[int | None] = mapped_column(BigInteger)
    posted_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    sentiment_score: Mapped[float] = mapped_column(Float, nullable=False)
    sentiment_label: Mapped[str] = mapped_column(String(10), nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "platform", "external_id", name="uq_listening_signals_external"),
        Index("ix_listening_signals_tenant_posted", "workspace_id", "livemode", "posted_at"),
    )

    @property
    def sentiment(self) -> Sentiment:
        return Sentiment(self.sentiment_score, self.sentiment_label)


class ListeningSignalMonitor(Base):
    """A monitor a signal matched on ingest. It repeats what the signal's reports are
    made by (its time, sentiment and platform, none of which changes), so that a list
    by monitor and counts by monitor and day read this table's index alone."""

    __tablename__ = "listening_signal_monitors"

    signal_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("listening_signals.id", ondelete="CASCADE"), primary_key=True
    )
    monitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("listening_monitors.id", ondelete="CASCADE"), primary_key=True
    )
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)
    posted_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    sentiment_label: Mapped[str] = mapped_column(String(10), nullable=False)
    platform: Mapped[str] = mapped_column(String(20), nullable=False)

    __table_args__ = (
        Index("ix_listening_signal_monitors_monitor_posted", "monitor_id", "posted_at", "signal_id"),
    )
