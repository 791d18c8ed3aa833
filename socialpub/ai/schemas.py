"""The contract's shapes of the AI assistant: brand context, conversations, insights."""
from __future__ import annotations

from marshmallow import Schema, fields, post_dump

from socialpub.ai.insights import MIN_SAMPLE
from socialpub.serialization import UtcTimestamp


class BrandContextSchema(Schema):
    """The workspace's brand context (a singleton document: no id of its own)."""

    class Meta:
        ordered = True

    voice = fields.String()
    audience = fields.String()
    banned_words = fields.List(fields.String(), data_key="bannedWords")
    hashtags = fields.List(fields.String())
    sample_posts = fields.List(fields.String(), data_key="samplePosts")
    updated_at = UtcTimestamp(data_key="updatedAt", allow_none=True)


class ChatRequestSchema(Schema):
    message = fields.String(required=True)
    conversation_id = fields.String(data_key="conversationId", load_default=None)


class DraftSchema(Schema):
    class Meta:
        ordered = True

    platform = fields.String()
    content = fields.String()


class MessageSchema(Schema):
    """One message of a conversation; `drafts` only on replies that carry some."""

    class Meta:
        ordered = True

    id = fields.String()
    role = fields.String()
    content = fields.String()
    drafts = fields.List(fields.Nested(DraftSchema))
    created_at = UtcTimestamp(data_key="createdAt")

    @post_dump
    def _without_empty_drafts(self, data, **kwargs):
        if not data.get("drafts"):
            data.pop("drafts", None)
        return data


class ChatReplySchema(Schema):
    class Meta:
        ordered = True

    conversation_id = fields.String(data_key="conversationId")
    message = fields.Nested(MessageSchema)
    drafts = fields.List(fields.Nested(DraftSchema))

    @post_dump
    def _without_empty_drafts(self, data, **kwargs):
        if not data.get("drafts"):
            data.pop("drafts", None)
        return data


class ConversationSchema(Schema):
    class Meta:
        ordered = True

    id = fields.String()
    title = fields.String()
    livemode = fields.Boolean()
    created_at = UtcTimestamp(data_key="createdAt")
    last_message_at = UtcTimestamp(data_key="lastMessageAt")


class EvidenceSchema(Schema):
    class Meta:
        ordered = True

    segment = fields.String()
    posts = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate")
    baseline = fields.String()
    baseline_posts = fields.Integer(data_key="baselinePosts")
    baseline_engagement_rate = fields.Float(data_key="baselineEngagementRate")
    relative_difference = fields.Float(data_key="relativeDifference")


class InsightSchema(Schema):
    class Meta:
        ordered = True

    kind = fields.String()
    title = fields.String()
    detail = fields.String()
    evidence = fields.Nested(EvidenceSchema)


class InsightReportSchema(Schema):
    class Meta:
        ordered = True

    since = UtcTimestamp()
    until = UtcTimestamp()
    posts_analyzed = fields.Integer(data_key="postsAnalyzed")
    posts_with_rate = fields.Integer(data_key="postsWithEngagementRate")
    minimum_sample = fields.Function(lambda report: MIN_SAMPLE, data_key="minimumSample")
    insights = fields.List(fields.Nested(InsightSchema))
