"""The contract's shapes of a feed, a feed's item and the requests about them."""
from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from socialpub.serialization import RecordSchema, UtcTimestamp


class FeedCreateSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    url = fields.String(required=True)
    title = fields.String(allow_none=True)
    mode = fields.String()
    platforms = fields.List(fields.String(), required=True)
    template = fields.String()
    fetch_interval_minutes = fields.Integer(data_key="fetchIntervalMinutes", strict=True)
    max_items_per_fetch = fields.Integer(data_key="maxItemsPerFetch", strict=True)


class FeedUpdateSchema(FeedCreateSchema):
    url = fields.String()
    platforms = fields.List(fields.String())


class ItemPublishSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    mode = fields.String(required=True)
    scheduled_at = UtcTimestamp(data_key="scheduledAt")


class FeedSchema(RecordSchema):
    url = fields.String()
    title = fields.String(allow_none=True)
    status = fields.String()
    mode = fields.String()
    platforms = fields.List(fields.String())
    template = fields.String()
    fetch_interval_minutes = fields.Integer(data_key="fetchIntervalMinutes")
    max_items_per_fetch = fields.Integer(data_key="maxItemsPerFetch")
    last_fetched_at = UtcTimestamp(data_key="lastFetchedAt", allow_none=True)
    next_fetch_at = UtcTimestamp(data_key="nextFetchAt", allow_none=True)
    last_error = fields.String(data_key="lastError", allow_none=True)
    consecutive_failures = fields.Integer(data_key="consecutiveFailures")
    item_counts = fields.Raw(data_key="itemCounts")
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "url", "title", "status", "mode", "platforms", "template", "fetch_interval_minutes",
                  "max_items_per_fetch", "last_fetched_at", "next_fetch_at", "last_error", "consecutive_failures",
                  "item_counts", "livemode", "created_at", "updated_at")


class ItemSchema(RecordSchema):
    feed_id = fields.UUID(data_key="feedId")
    title = fields.String(allow_none=True)
    link = fields.String(allow_none=True)
    summary = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    published_at = UtcTimestamp(data_key="publishedAt", allow_none=True)
    status = fields.String()
    post_id = fields.UUID(data_key="postId", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "feed_id", "title", "link", "summary", "author", "published_at", "status", "post_id",
                  "livemode", "created_at", "updated_at")
