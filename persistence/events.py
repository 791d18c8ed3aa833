"""The outbox of events that webhooks deliver."""
from __future__ import annotations


from sqlalchemy import JSON, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin


class Event(TenantMixin, Base):
    """The outbox: written in the same transaction as the change it reports, and
    delivered to webhook endpoints later."""

    __tablename__ = "events"

    type: Mapped[str] = mapped_column(String(50), nullable=False)
    data: Mapped[dict] = mapped_column(JSON, nullable=False)

    __table_args__ = (Index("ix_events_tenant_created", "workspace_id", "livemode", "created_at"),)
