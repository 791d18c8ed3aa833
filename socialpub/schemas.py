"""Marshmallow schemas, one per resource: the one place where model attribute names
meet contract field names."""
from __future__ import annotations

import datetime as dt

from marshmallow import RAISE, Schema, fields


class UtcTimestamp(fields.AwareDateTime):
    """ISO 8601 in, with a required offset (stored as UTC); `...Z` out."""

    default_error_messages = {"range": "Out of range; in UTC it must fall within the years 1 to 9999."}

    def __init__(self, **kwargs):
        super().__init__(format="iso", **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        value = value.astimezone(dt.timezone.utc)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parsed.astimezone(dt.timezone.utc)
        except OverflowError:
            # A valid time near either end of the calendar whose offset moves it past
            # year 9999 or before year 1 (9999-12-31T23:59:59-14:00).
            raise self.make_error("range") from None


class RecordSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    id = fields.UUID(dump_only=True)
    created_at = UtcTimestamp(data_key="createdAt", dump_only=True)
    updated_at = UtcTimestamp(data_key="updatedAt", dump_only=True)


def _error(code, message):
    return {"code": code, "message": message} if code else None


class TargetSchema(Schema):
    """One (platform, account) of a post and what happened there."""

    class Meta:
        ordered = True

    id = fields.UUID()
    platform = fields.String()
    account_id = fields.UUID(data_key="accountId")
    status = fields.String()
    external_id = fields.String(data_key="externalId", allow_none=True)
    url = fields.String(allow_none=True)
    error = fields.Function(lambda t: _error(t.error_code, t.error_message))
    attempts = fields.Integer()
    next_attempt_at = UtcTimestamp(data_key="nextAttemptAt", allow_none=True)
    published_at = UtcTimestamp(data_key="publishedAt", allow_none=True)
    comment = fields.Method("dump_comment")

    def dump_comment(self, target):
        if not target.comment_status:
            return None
        return {
            "status": "pending" if target.comment_status == "posting" else target.comment_status,
            "externalId": target.comment_external_id,
            "url": target.comment_url,
            "error": _error(target.comment_error_code, target.comment_error_message),
            "attempts": target.comment_attempts,
        }

    def get_attribute(self, obj, attr, default):
        value = super().get_attribute(obj, attr, default)
        # A target being published shows when its current attempt started, not a due time.
        if attr == "next_attempt_at" and obj.status != "pending":
            return None
        return value


class FirstCommentSchema(RecordSchema):
    content = fields.String(required=True)
    status = fields.Method("dump_status", dump_only=True)

    def dump_status(self, comment):
        from socialpub.publishing.service import first_comment_status

        return first_comment_status(comment)

    class Meta(RecordSchema.Meta):
        fields = ("id", "content", "status", "created_at", "updated_at")


class AccountSchema(RecordSchema):
    platform = fields.String()
    handle = fields.String()
    connector = fields.String()
    status = fields.String()
    status_reason = fields.String(data_key="statusReason", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "platform", "handle", "connector", "status", "status_reason", "livemode", "created_at", "updated_at")


class PostSchema(RecordSchema):
    content = fields.String(required=True)
    platforms = fields.List(fields.String(), required=True)
    status = fields.String(dump_only=True)
    scheduled_at = UtcTimestamp(data_key="scheduledAt", allow_none=True)
    published_at = UtcTimestamp(data_key="publishedAt", dump_only=True)
    archived_at = UtcTimestamp(data_key="archivedAt", dump_only=True)
    livemode = fields.Boolean(dump_only=True)
    targets = fields.List(fields.Nested(TargetSchema), dump_only=True)
    first_comment = fields.Nested(FirstCommentSchema, data_key="firstComment", dump_only=True, allow_none=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "content", "platforms", "status", "scheduled_at", "published_at", "archived_at",
                  "targets", "first_comment", "livemode", "created_at", "updated_at")


class BulkItemSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    post_id = fields.String(data_key="postId", required=True)
    scheduled_at = UtcTimestamp(data_key="scheduledAt", required=True)


class BulkRequestSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    action = fields.String(required=True)
    post_ids = fields.List(fields.String(), data_key="postIds")
    scheduled_at = UtcTimestamp(data_key="scheduledAt")
    items = fields.List(fields.Nested(BulkItemSchema))


class BulkOperationSchema(RecordSchema):
    action = fields.String()
    status = fields.String()
    total = fields.Integer()
    processed = fields.Integer()
    succeeded = fields.Integer()
    failed = fields.Integer()
    errors = fields.Method("dump_errors")
    livemode = fields.Boolean()
    started_at = UtcTimestamp(data_key="startedAt", allow_none=True)
    completed_at = UtcTimestamp(data_key="completedAt", allow_none=True)

    def dump_errors(self, operation):
        return [
            {"postId": error.post_id, "code": error.code, "message": error.message}
            for error in operation.item_errors
        ]

    class Meta(RecordSchema.Meta):
        fields = ("id", "action", "status", "total", "processed", "succeeded", "failed", "errors", "livemode",
                  "created_at", "started_at", "completed_at", "updated_at")


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
