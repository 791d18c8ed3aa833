"""The contract's shapes of a post, its targets and its first comment."""
from __future__ import annotations

from marshmallow import fields

from persistence.posts import CommentStatus, TargetStatus
from socialpub.posts.first_comment_status import first_comment_status
from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp, error_object


class TargetSchema(CompiledSchema):
    """One (platform, account) of a post and what happened there."""

    class Meta:
        ordered = True

    id = fields.UUID()
    platform = fields.String()
    account_id = fields.UUID(data_key="accountId")
    status = fields.String()
    external_id = fields.String(data_key="externalId", allow_none=True)
    url = fields.String(allow_none=True)
    error = fields.Function(lambda t: error_object(t.error_code, t.error_message))
    attempts = fields.Integer()
    next_attempt_at = UtcTimestamp(data_key="nextAttemptAt", allow_none=True)
    published_at = UtcTimestamp(data_key="publishedAt", allow_none=True)
    comment = fields.Method("dump_comment")

    def dump_comment(self, target):
        if not target.comment_status:
            return None
        return {
            "status": CommentStatus.PENDING if target.comment_status == CommentStatus.POSTING else target.comment_status,
            "externalId": target.comment_external_id,
            "url": target.comment_url,
            "error": error_object(target.comment_error_code, target.comment_error_message),
            "attempts": target.comment_attempts,
        }

    def get_attribute(self, obj, attr, default):
        value = super().get_attribute(obj, attr, default)
        # A target being published shows when its current attempt started, not a due time.
        if attr == "next_attempt_at" and obj.status != TargetStatus.PENDING:
            return None
        return value


class FirstCommentSchema(RecordSchema):
    content = fields.String(required=True)
    status = fields.Method("dump_status", dump_only=True)

    def dump_status(self, comment):
        return first_comment_status(comment)

    class Meta(RecordSchema.Meta):
        fields = ("id", "content", "status", "created_at", "updated_at")


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
