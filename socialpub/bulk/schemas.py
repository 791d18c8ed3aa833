"""The contract's shapes of a bulk request and a bulk operation."""
from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from socialpub.serialization import RecordSchema, UtcTimestamp


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
