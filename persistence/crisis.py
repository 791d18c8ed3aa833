"""Crisis management: the people alerted (contacts), the rules that watch listening's
signals, the window counters those rules keep, the incidents they (or a person) open,
and the email notifications of an opened incident."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class ConditionType(enum.StrEnum):
    # More negative signals in the window than the previous windows make usual.
    NEGATIVE_SPIKE = "negativeSpike"
    # More signals containing one of the rule's keywords than usual.
    KEYWORD_SPIKE = "keywordSpike"
    # The mean sentiment score of the window's signals below the rule's floor.
    SENTIMENT_FLOOR = "sentimentFloor"


class Severity(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class IncidentStatus(enum.StrEnum):
    # In the order an incident moves through them (forward only; resolved is final).
    INVESTIGATING = "investigating"
    IDENTIFIED = "identified"
    MONITORING = "monitoring"
    RESOLVED = "resolved"


class NotificationStatus(enum.StrEnum):
    QUEUED = "queued"
    SENT = "sent"
    FAILED = "failed"


class CrisisContact(TenantMixin, Base):
    """Someone told by email when an incident opens (managed with the CLI and the dashboard)."""

    __tablename__ = "crisis_contacts"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    # Lowercased: one contact per address in a workspace's mode.
    email: Mapped[str] = mapped_column(String(254), nullable=False)
    # E.164 (+14155550123), for the people who call them; not messaged by the service.
    phone: Mapped[str | None] = mapped_column(String(16))
    role: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "email", name="uq_crisis_contacts_tenant_email"),
        Index("ix_crisis_contacts_tenant_created", "workspace_id", "livemode", "created_at"),
        Index("ix_crisis_contacts_tenant_name", "workspace_id", "livemode", "name", "id"),
    )


class CrisisRule(TenantMixin, Base):
    __tablename__ = "crisis_rules"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    # Listening monitors' ids (text); empty: the signals of every monitor.
    monitor_ids: Mapped[list] = mapped_column(JSON, nullable=False)
    condition_type: Mapped[str] = mapped_column(String(20), nullable=False)
    window_minutes: Mapped[int] = mapped_column(Integer, nullable=False)
    # k (standard deviations) for a spike; the floor of the mean score for sentimentFloor.
    threshold: Mapped[float] = mapped_column(Float, nullable=False)
    keywords: Mapped[list] = mapped_column(JSON, nullable=False)
    minimum_volume: Mapped[int] = mapped_column(Integer, nullable=False)
    cooldown_minutes: Mapped[int] = mapped_column(Integer, nullable=False)
    severity: Mapped[str] = mapped_column(String(20), nullable=False)
    # Contacts' ids (text), told when the rule opens an incident.
    contact_ids: Mapped[list] = mapped_column(JSON, nullable=False)
    # Set by the conditional update that opens an incident: the cooldown runs from it.
    last_tripped_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_crisis_rules_tenant_enabled", "workspace_id", "livemode", "enabled"),
        Index("ix_crisis_rules_tenant_created", "workspace_id", "livemode", "created_at", "id"),
    )


class CrisisCounter(Base):
    """What a rule counted of the signals in one bucket of time: a tenth of its window
    (`bucket` is the bucket's number since the Unix epoch, in such tenths). Ingests
    add to it with one upsert; evaluation reads the current window's ten buckets and
    the 240 before them. Rows older than that expire (`expires_at`) and are pruned."""

    __tablename__ = "crisis_counters"

    rule_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("crisis_rules.id", ondelete="CASCADE"), primary_key=True
    )
    bucket: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # Signals of the rule's monitors; of them, negative ones and ones with a keyword;
    # and the sum of their sentiment scores.
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    negative: Mapped[int] = mapped_column(Integer, nullable=False)
    keyword_hits: Mapped[int] = mapped_column(Integer, nullable=False)
    score_sum: Mapped[float] = mapped_column(Float, nullable=False)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)

    __table_args__ = (Index("ix_crisis_counters_expires", "expires_at"),)


class CrisisIncident(TenantMixin, Base):
    __tablename__ = "crisis_incidents"

    title: Mapped[str] = mapped_column(String(200), nullable=False)
    severity: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    # The rule that opened it; None when a person opened it (or the rule is gone).
    rule_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("crisis_rules.id", ondelete="SET NULL"))
    signal_ids: Mapped[list] = mapped_column(JSON, nullable=False)
    # [{status, note, at, by}], oldest first: `at` as the contract writes timestamps.
    timeline: Mapped[list] = mapped_column(JSON, nullable=False)
    opened_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    acknowledged_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_crisis_incidents_tenant_status", "workspace_id", "livemode", "status"),
    )


# The incidents newest first, in the list's order (socialpub.crisis.incidents): declared
# on the table's columns, as its order is not a column's name.
Index("ix_crisis_incidents_tenant_opened", CrisisIncident.workspace_id, CrisisIncident.livemode,
      CrisisIncident.opened_at.desc(), CrisisIncident.id)


class CrisisNotification(TenantMixin, LeasedMixin, Base):
    """One email to one contact about one opened incident: recorded `queued` in the
    transaction that opens the incident, sent afterwards by a job (socialpub.crisis.notifications)."""

    __tablename__ = "crisis_notifications"

    incident_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("crisis_incidents.id", ondelete="CASCADE"), nullable=False
    )
    contact_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("crisis_contacts.id", ondelete="SET NULL"))
    # The address as it was when the incident opened.
    email: Mapped[str] = mapped_column(String(254), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    sent_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_crisis_notifications_due", "status", "next_attempt_at"),
        Index("ix_crisis_notifications_incident", "incident_id"),
    )
