"""The contract's shapes of influencers, their lists and outreach, campaigns and payments."""
from __future__ import annotations

from marshmallow import RAISE, fields

from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class _Input(CompiledSchema):
    class Meta:
        unknown = RAISE


class _Shape(CompiledSchema):
    class Meta:
        ordered = True


class HandleSchema(_Shape):
    platform = fields.String()
    handle = fields.String()


class HandleInputSchema(_Input):
    platform = fields.String(required=True)
    handle = fields.String(required=True)


class InfluencerInputSchema(_Input):
    name = fields.String(required=True)
    handles = fields.List(fields.Nested(HandleInputSchema), required=True)
    email = fields.String(allow_none=True)
    followers = fields.Integer(strict=True)
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    niches = fields.List(fields.String())
    location = fields.String(allow_none=True)
    language = fields.String(allow_none=True)
    notes = fields.String(allow_none=True)
    lists_named = fields.List(fields.String(), data_key="lists")


class HistoryEntrySchema(_Shape):
    status = fields.String()
    # Stored as the contract writes a timestamp.
    at = fields.String()
    note = fields.String(allow_none=True)


class OutreachSchema(RecordSchema):
    influencer_id = fields.UUID(data_key="influencerId")
    channel = fields.String()
    recipient = fields.String()
    platform = fields.String(allow_none=True)
    subject = fields.String(allow_none=True)
    message = fields.String()
    template_id = fields.UUID(data_key="templateId", allow_none=True)
    forced = fields.Boolean()
    status = fields.String()
    attempts = fields.Integer()
    last_error = fields.String(data_key="lastError", allow_none=True)
    sent_at = UtcTimestamp(data_key="sentAt", allow_none=True)
    replied_at = UtcTimestamp(data_key="repliedAt", allow_none=True)
    history = fields.List(fields.Nested(HistoryEntrySchema))
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "influencer_id", "channel", "recipient", "platform", "subject", "message", "template_id",
                  "forced", "status", "attempts", "last_error", "sent_at", "replied_at", "history", "livemode",
                  "created_at", "updated_at")


INFLUENCER_FIELDS = ("id", "name", "handles", "email", "followers", "engagement_rate", "niches", "location", "language",
                     "notes", "list_names", "last_outreach_at", "livemode", "created_at", "updated_at")


class InfluencerSchema(RecordSchema):
    name = fields.String()
    handles = fields.List(fields.Nested(HandleSchema))
    email = fields.String(allow_none=True)
    followers = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    niches = fields.List(fields.String())
    location = fields.String(allow_none=True)
    language = fields.String(allow_none=True)
    notes = fields.String(allow_none=True)
    # The names of the lists it is on (attached per page by socialpub.influencers.lists).
    list_names = fields.List(fields.String(), data_key="lists")
    last_outreach_at = UtcTimestamp(data_key="lastOutreachAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = INFLUENCER_FIELDS


class InfluencerDetailSchema(InfluencerSchema):
    # Its latest outreach, newest first (attached by service.with_details).
    outreach = fields.List(fields.Nested(OutreachSchema))

    class Meta(RecordSchema.Meta):
        fields = INFLUENCER_FIELDS + ("outreach",)


class OutreachInputSchema(_Input):
    channel = fields.String(required=True)
    subject = fields.String()
    message = fields.String()
    template_id = fields.String(data_key="templateId")
    variables = fields.Dict(keys=fields.String(), values=fields.String())
    platform = fields.String()
    force = fields.Boolean()


class InfluencerListSchema(RecordSchema):
    name = fields.String()
    member_count = fields.Integer(data_key="memberCount")
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "member_count", "livemode", "created_at", "updated_at")


class BudgetSchema(_Shape):
    amount = fields.Integer(attribute="budget_amount")
    currency = fields.String(attribute="budget_currency")


class BudgetInputSchema(_Input):
    amount = fields.Integer(required=True, strict=True)
    currency = fields.String(required=True)


class DeliverableSchema(_Shape):
    type = fields.String()
    # Stored as the contract writes a timestamp.
    due_at = fields.String(data_key="dueAt", allow_none=True)
    status = fields.String()


class DeliverableInputSchema(_Input):
    type = fields.String(required=True)
    due_at = UtcTimestamp(data_key="dueAt", allow_none=True)
    status = fields.String()


_budget_schema = BudgetSchema()


class CampaignSchema(RecordSchema):
    name = fields.String()
    status = fields.String()
    # The budget columns as one object; null without a budget.
    budget = fields.Function(lambda campaign: _budget_schema.dump(campaign) if campaign.budget_currency else None)
    starts_at = UtcTimestamp(data_key="startsAt", allow_none=True)
    ends_at = UtcTimestamp(data_key="endsAt", allow_none=True)
    influencer_ids = fields.List(fields.String(), data_key="influencerIds")
    deliverables = fields.List(fields.Nested(DeliverableSchema))
    completed_at = UtcTimestamp(data_key="completedAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "status", "budget", "starts_at", "ends_at", "influencer_ids", "deliverables",
                  "completed_at", "livemode", "created_at", "updated_at")


class CampaignInputSchema(_Input):
    name = fields.String(required=True)
    status = fields.String()
    budget = fields.Nested(BudgetInputSchema, allow_none=True)
    starts_at = UtcTimestamp(data_key="startsAt", allow_none=True)
    ends_at = UtcTimestamp(data_key="endsAt", allow_none=True)
    influencer_ids = fields.List(fields.String(), data_key="influencerIds")
    deliverables = fields.List(fields.Nested(DeliverableInputSchema))


class PaymentSchema(RecordSchema):
    campaign_id = fields.UUID(data_key="campaignId", allow_none=True)
    influencer_id = fields.UUID(data_key="influencerId")
    amount = fields.Integer()
    currency = fields.String()
    status = fields.String()
    idempotency_key = fields.String(data_key="idempotencyKey")
    note = fields.String(allow_none=True)
    recorded_by = fields.String(data_key="recordedBy")
    paid_at = UtcTimestamp(data_key="paidAt", allow_none=True)
    cancelled_at = UtcTimestamp(data_key="cancelledAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "campaign_id", "influencer_id", "amount", "currency", "status", "idempotency_key", "note",
                  "recorded_by", "paid_at", "cancelled_at", "livemode", "created_at", "updated_at")
