"""Influencer records: the influencers a workspace works with (and the columns their
search reads), the lists that group them, the outreach messages sent to them, the
campaigns they take part in and the payments made to them."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class OutreachChannel(enum.StrEnum):
    EMAIL = "email"
    DM = "dm"


class OutreachStatus(enum.StrEnum):
    # Recorded, not sent yet (an email waits here while no SMTP server is configured).
    QUEUED = "queued"
    SENT = "sent"
    FAILED = "failed"
    # The influencer answered (marked by an operator).
    REPLIED = "replied"


class CampaignStatus(enum.StrEnum):
    # In the order a campaign moves through them (forward only; completed is final).
    DRAFT = "draft"
    ACTIVE = "active"
    COMPLETED = "completed"


class DeliverableStatus(enum.StrEnum):
    PENDING = "pending"
    SUBMITTED = "submitted"
    APPROVED = "approved"
    PUBLISHED = "published"


class PaymentStatus(enum.StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    PAID = "paid"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Influencer(TenantMixin, Base):
    """An influencer. Beside what the contract shows, the service keeps the columns its
    search reads (socialpub.influencers.search): `name_key` (the name folded, for the
    sort by name), `search_text` (name, handles and email folded: case, accents and
    `@` dropped, for `q`), `platform_bits` (one bit per platform the influencer has a
    handle on, in the order of socialpub.platforms.PLATFORMS) and `niches_key`
    (`|fashion|travel|`), each written with the fields it is made of."""

    __tablename__ = "influencers"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    name_key: Mapped[str] = mapped_column(String(200), nullable=False)
    # [{platform, handle}], in the order given; each (platform, handle) once in a
    # workspace's mode (InfluencerHandle keeps that unique).
    handles: Mapped[list] = mapped_column(JSON, nullable=False)
    email: Mapped[str | None] = mapped_column(String(254))
    followers: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # A percentage (3.2 is 3.2 %); None when unknown.
    engagement_rate: Mapped[float | None] = mapped_column(Float)
    niches: Mapped[list] = mapped_column(JSON, nullable=False)
    # ISO 3166-1 alpha-2 (upper case) and ISO 639-1 (lower case).
    location: Mapped[str | None] = mapped_column(String(2))
    language: Mapped[str | None] = mapped_column(String(2))
    notes: Mapped[str | None] = mapped_column(Text)
    search_text: Mapped[str] = mapped_column(Text, nullable=False)
    platform_bits: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    niches_key: Mapped[str] = mapped_column(String(2000), nullable=False, default="|")
    # When the latest outreach that did not fail was recorded (the 24-hour rule).
    last_outreach_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_influencers_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_influencers_tenant_name", "workspace_id", "livemode", "name_key"),
        # The search's: each leads with a filter or a sort, and carries every other
        # filter column (INCLUDE, on PostgreSQL), so that a search's exact count is an
        # index-only scan and its page walks the sort's index.
        Index("ix_influencers_tenant_followers", "workspace_id", "livemode", "followers",
              postgresql_include=["engagement_rate", "location", "language", "platform_bits", "niches_key"]),
        Index("ix_influencers_tenant_location", "workspace_id", "livemode", "location", "followers",
              postgresql_include=["engagement_rate", "language", "platform_bits", "niches_key"]),
        Index("ix_influencers_tenant_language", "workspace_id", "livemode", "language", "followers",
              postgresql_include=["engagement_rate", "location", "platform_bits", "niches_key"]),
        # Ascending engagement, unknown last (an ascending index's order).
        Index("ix_influencers_tenant_engagement_asc", "workspace_id", "livemode", "engagement_rate"),
        # `q` as substrings of the folded text: trigrams on PostgreSQL (pg_trgm).
        Index(
            "ix_influencers_search_trgm", "search_text",
            postgresql_using="gin", postgresql_ops={"search_text": "gin_trgm_ops"},
        ),
    )


class InfluencerHandle(Base):
    """One handle of an influencer: keeps each (platform, handle) to one influencer of
    a workspace's mode (`handle_key`: the handle folded, without a leading `@`)."""

    __tablename__ = "influencer_handles"

    influencer_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("influencers.id", ondelete="CASCADE"), primary_key=True
    )
    platform: Mapped[str] = mapped_column(String(20), primary_key=True)
    handle_key: Mapped[str] = mapped_column(String(200), primary_key=True)
    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
    )
    livemode: Mapped[bool] = mapped_column(Boolean, nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "platform", "handle_key", name="uq_influencer_handles_tenant"),
    )


class InfluencerList(TenantMixin, Base):
    """A named list of influencers, made the first time an influencer names it."""

    __tablename__ = "influencer_lists"

    name: Mapped[str] = mapped_column(String(100), nullable=False)
    # The name folded (case and accents): one list per such name in a workspace's mode.
    name_key: Mapped[str] = mapped_column(String(100), nullable=False)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "name_key", name="uq_influencer_lists_tenant_name"),
    )


class InfluencerListMember(Base):
    __tablename__ = "influencer_list_members"

    list_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("influencer_lists.id", ondelete="CASCADE"), primary_key=True
    )
    influencer_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("influencers.id", ondelete="CASCADE"), primary_key=True
    )

    __table_args__ = (Index("ix_influencer_list_members_influencer", "influencer_id"),)


class InfluencerOutreach(TenantMixin, LeasedMixin, Base):
    """One message to one influencer: recorded `queued` by the request, sent afterwards
    by a job (socialpub.influencers.sending), by email or as a direct message."""

    __tablename__ = "influencer_outreach"

    influencer_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("influencers.id", ondelete="CASCADE"), nullable=False
    )
    channel: Mapped[str] = mapped_column(String(10), nullable=False)
    # The address (email) or handle (dm) as it was when the outreach was recorded.
    recipient: Mapped[str] = mapped_column(String(254), nullable=False)
    # A direct message's platform and the connected account it goes from.
    platform: Mapped[str | None] = mapped_column(String(20))
    account_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("connected_accounts.id", ondelete="SET NULL")
    )
    subject: Mapped[str | None] = mapped_column(String(250))
    # The message as sent: filled by the placeholder engine when it was recorded.
    message: Mapped[str] = mapped_column(Text, nullable=False)
    template_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("templates.id", ondelete="SET NULL"))
    forced: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    sent_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    replied_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # The platform's id of a direct message once sent.
    external_id: Mapped[str | None] = mapped_column(String(500))
    # [{status, at, note}], oldest first: `at` as the contract writes timestamps.
    history: Mapped[list] = mapped_column(JSON, nullable=False)

    __table_args__ = (
        Index("ix_influencer_outreach_due", "status", "next_attempt_at"),
        Index("ix_influencer_outreach_influencer", "influencer_id", "created_at"),
    )


class InfluencerCampaign(TenantMixin, Base):
    __tablename__ = "influencer_campaigns"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    # Minor units of `budget_currency` (ISO 4217); both None without a budget.
    budget_amount: Mapped[int | None] = mapped_column(BigInteger)
    budget_currency: Mapped[str | None] = mapped_column(String(3))
    starts_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    ends_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # Influencers' ids (text), in the order given.
    influencer_ids: Mapped[list] = mapped_column(JSON, nullable=False)
    # [{type, due_at (as the contract writes it, or None), status}]
    deliverables: Mapped[list] = mapped_column(JSON, nullable=False)
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        Index("ix_influencer_campaigns_tenant_created", "workspace_id", "livemode", "created_at", "id"),
    )


class InfluencerPayment(TenantMixin, Base):
    """A payment to an influencer, recorded by an operator or by a campaign's
    completion. `idempotency_key` is unique in a workspace's mode: recording again
    with the same key finds this payment instead of making a second one."""

    __tablename__ = "influencer_payments"

    campaign_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("influencer_campaigns.id", ondelete="SET NULL")
    )
    influencer_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("influencers.id", ondelete="CASCADE"), nullable=False
    )
    # Minor units of `currency` (ISO 4217): 5000 EUR is €50.00.
    amount: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency: Mapped[str] = mapped_column(String(3), nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    idempotency_key: Mapped[str] = mapped_column(String(255), nullable=False)
    note: Mapped[str | None] = mapped_column(String(500))
    # Who recorded it (an operator, a member, or the campaign's completion).
    recorded_by: Mapped[str] = mapped_column(String(200), nullable=False)
    paid_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    cancelled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "idempotency_key", name="uq_influencer_payments_key"),
        Index("ix_influencer_payments_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_influencer_payments_campaign", "campaign_id"),
        Index("ix_influencer_payments_influencer", "influencer_id"),
    )


# Descending engagement, unknown last (`-engagementRate`), with the filter columns:
# declared on the table's columns, as its order is not a column's name.
Index(
    "ix_influencers_tenant_engagement", Influencer.workspace_id, Influencer.livemode,
    Influencer.engagement_rate.desc().nulls_last(),
    postgresql_include=["followers", "location", "language", "platform_bits", "niches_key"],
)
