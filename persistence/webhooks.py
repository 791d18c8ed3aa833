"""Webhook endpoints and their deliveries.

The database is the truth for what has been delivered: one delivery per (endpoint,
event), enforced by a unique constraint, and one fan-out mark per outbox event, so
two workers fanning out at once cannot deliver an event twice to the same endpoint.
"""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.events import Event
from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime, utcnow


class DeliveryStatus(enum.StrEnum):
    # Pending until an attempt succeeds, or until the last one allowed fails.
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class WebhookEndpoint(TenantMixin, LeasedMixin, Base):
    """A URL that receives one mode's events of its workspace, signed with its secret.
    Its lease makes one sender at a time per endpoint, so deliveries go out in event order."""

    __tablename__ = "webhook_endpoints"

    url: Mapped[str] = mapped_column(String(2048), nullable=False)
    description: Mapped[str | None] = mapped_column(String(500))
    # Null subscribes to every type, including types added later.
    event_types: Mapped[list[str] | None] = mapped_column(JSON)
    # Fernet-encrypted: the plain secret is needed to sign, so it cannot be a hash.
    secret_encrypted: Mapped[str] = mapped_column(Text, nullable=False)
    # Enough of the secret to tell two apart in the dashboard; shown in full only once.
    secret_prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    disabled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # Health, for the automatic disable: failed attempts since the last success, and
    # when the first of them happened.
    consecutive_failures: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    failing_since: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_success_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_webhook_endpoints_workspace", "workspace_id", "livemode"),
        Index("ix_webhook_endpoints_lease", "lease_until"),
    )


class WebhookDelivery(TenantMixin, LeasedMixin, Base):
    """One event (or test ping) for one endpoint, and what happened to its attempts.

    The body is stored as sent, so every attempt and resend carries the same bytes;
    only the signature's timestamp changes between attempts."""

    __tablename__ = "webhook_deliveries"

    endpoint_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), nullable=False
    )
    # Null for test pings, which have no outbox event.
    event_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("events.id", ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(50), nullable=False)
    # The order deliveries of one endpoint go out in.
    event_created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    payload: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=DeliveryStatus.PENDING)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # Set at the first attempt (and again on resend): no retry after it.
    give_up_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    response_status: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    last_error_code: Mapped[str | None] = mapped_column(String(100))
    last_error_message: Mapped[str | None] = mapped_column(Text)
    first_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    endpoint: Mapped[WebhookEndpoint] = relationship()

    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id", name="uq_webhook_deliveries_endpoint_event"),
        Index("ix_webhook_deliveries_workspace_created", "workspace_id", "created_at"),
        Index("ix_webhook_deliveries_endpoint_due", "endpoint_id", "status", "event_created_at"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
    )


class WebhookFanOut(Base):
    """Marks an outbox event as turned into its deliveries. Written in the same
    transaction as the deliveries; its primary key makes a second fan-out of the event
    a no-op, whichever worker gets there second."""

    __tablename__ = "webhook_fanouts"

    event_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("events.id", ondelete="CASCADE"), primary_key=True)
    event_created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, nullable=False)

    __table_args__ = (Index("ix_webhook_fanouts_event_created", "event_created_at"),)


# The fan-out reads recent outbox events across workspaces, newest window only.
Index("ix_events_created", Event.created_at)
