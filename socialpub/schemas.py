"""Marshmallow schemas, one per resource: the one place where model attribute names
meet contract field names."""
from __future__ import annotations

import datetime as dt

from marshmallow import RAISE, Schema, fields


class UtcTimestamp(fields.AwareDateTime):
    """ISO 8601 in, with a required offset (stored as UTC); `...Z` out."""

    def __init__(self, **kwargs):
        super().__init__(format="iso", **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        value = value.astimezone(dt.timezone.utc)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        return parsed.astimezone(dt.timezone.utc)


class RecordSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    id = fields.UUID(dump_only=True)
    created_at = UtcTimestamp(data_key="createdAt", dump_only=True)
    updated_at = UtcTimestamp(data_key="updatedAt", dump_only=True)


class PostSchema(RecordSchema):
    content = fields.String(required=True)
    platforms = fields.List(fields.String(), required=True)
    status = fields.String(dump_only=True)
    scheduled_at = UtcTimestamp(data_key="scheduledAt", allow_none=True)
    published_at = UtcTimestamp(data_key="publishedAt", dump_only=True)
    archived_at = UtcTimestamp(data_key="archivedAt", dump_only=True)
    livemode = fields.Boolean(dump_only=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "content", "platforms", "status", "scheduled_at", "published_at", "archived_at",
                  "livemode", "created_at", "updated_at")
