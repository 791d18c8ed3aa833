"""Social listening: the monitors a workspace keeps (keywords to look for, on which
platforms and in which languages), the signals ingested (posts found on the
platforms, with their sentiment computed on ingest), which monitors each signal
matched (`ListeningSignalMonitor`, the link the monitor filter and the reports read
by monitor and time), the daily counts the stats read (`ListeningDaily`), the
sources each monitor's poll searches (`ListeningSource`, with its cursor) and the
reports built for a monitor over a window (`ListeningReport`)."""
from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass

from sqlalchemy import JSON, BigInteger, Boolean, Date, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class SentimentLabel(enum.StrEnum):
    POSITIVE = "positive"
    NEGATIVE = "negative"
    NEUTRAL = "neutral"


class ReportStatus(enum.StrEnum):
    PENDING = "pending"
    READY = "ready"
    FAILED = "failed"


class ListeningMonitor(TenantMixin, LeasedMixin, Base):
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
    # Set by the periodic poll of the platforms' public search (socialpub.listening.
    # polling): when it last ran for the monitor and what went wrong, if anything (the
    # errors of its failing sources). The poll leases the monitor (LeasedMixin) and
    # takes it again at `next_poll_at` (null: due now).
    last_polled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_poll_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_listening_monitors_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_listening_monitors_tenant_enabled", "workspace_id", "livemode", "enabled"),
        Index("ix_listening_monitors_poll_due", "enabled", "next_poll_at"),
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
        Index("ix_listening_signals_tenant_posted", "workspace_id", "livemode", "posted_at", "id"),
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


# The `monitor_id` of a daily count of every signal of a workspace's mode, matched or not.
ALL_SIGNALS = uuid.UUID(int=0)


class ListeningDaily(Base):
    """How many signals posted on one UTC day, of one sentiment, a workspace's mode
    stored (`monitor_id` ALL_SIGNALS) and each of its monitors matched. Each ingest adds its new signals with one upsert, in its
    transaction (socialpub.listening.rollups): the stats read a few rows a day instead
    of every signal."""

    __tablename__ = "listening_daily"

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    livemode: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    monitor_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    sentiment_label: Mapped[str] = mapped_column(String(10), primary_key=True)
    signals: Mapped[int] = mapped_column(BigInteger, nullable=False)


class ListeningSource(TenantMixin, Base):
    """One public search a monitor's poll reads: a platform's search (`base_url`, the
    AppView or the Mastodon instance; "sandbox" in test mode) for one `term` (a
    Bluesky query, a Mastodon hashtag). It keeps where the last read stopped
    (`cursor`) and its own failures: a source that failed is left alone until
    `paused_until`, the monitor's other sources going on."""

    __tablename__ = "listening_sources"

    monitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("listening_monitors.id", ondelete="CASCADE"), nullable=False
    )
    platform: Mapped[str] = mapped_column(String(20), nullable=False)
    base_url: Mapped[str] = mapped_column(String(500), nullable=False)
    term: Mapped[str] = mapped_column(String(500), nullable=False)
    cursor: Mapped[str | None] = mapped_column(String(500))
    last_polled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    failures: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    paused_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        UniqueConstraint("monitor_id", "platform", "base_url", "term", name="uq_listening_sources_search"),
    )


class ListeningReport(TenantMixin, LeasedMixin, Base):
    """A report on one monitor's signals posted in [`since`, `until`): asked for
    `pending`, built by a job (socialpub.listening.building), then `ready` with its
    figures, or `failed` with `failure_reason`. `share_of_voice` is [] until an area
    that tracks competitors fills it when the report is built (changes.REPORTS)."""

    __tablename__ = "listening_reports"

    monitor_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("listening_monitors.id", ondelete="CASCADE"), nullable=False
    )
    since: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    until: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    granularity: Mapped[str] = mapped_column(String(10), nullable=False)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    signals: Mapped[int | None] = mapped_column(BigInteger)
    sentiment_split: Mapped[dict | None] = mapped_column(JSON)
    volume: Mapped[list | None] = mapped_column(JSON)
    top_authors: Mapped[list | None] = mapped_column(JSON)
    top_keywords: Mapped[list | None] = mapped_column(JSON)
    share_of_voice: Mapped[list | None] = mapped_column(JSON)

    __table_args__ = (
        Index("ix_listening_reports_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_listening_reports_monitor_created", "monitor_id", "created_at"),
        Index("ix_listening_reports_pending", "status", "lease_until"),
    )
