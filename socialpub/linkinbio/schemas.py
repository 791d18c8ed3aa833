"""The contract's shapes of link-in-bio pages, their blocks and their analytics."""
from __future__ import annotations

from marshmallow import RAISE, fields

from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class _Input(CompiledSchema):
    class Meta:
        unknown = RAISE


class _Shape(CompiledSchema):
    class Meta:
        ordered = True


class ThemeInputSchema(_Input):
    preset = fields.String()
    accent_color = fields.String(data_key="accentColor")


class ThemeSchema(_Shape):
    preset = fields.String()
    accent_color = fields.String(data_key="accentColor")


class PageInputSchema(_Input):
    slug = fields.String(required=True)
    title = fields.String(required=True)
    bio = fields.String(allow_none=True)
    avatar_upload_key = fields.UUID(data_key="avatarUploadKey", allow_none=True)
    theme = fields.Nested(ThemeInputSchema)


class PublishInputSchema(_Input):
    published = fields.Boolean(required=True)


class BlockInputSchema(_Input):
    type = fields.String(required=True)
    position = fields.Integer(strict=True)
    title = fields.String(allow_none=True)
    url = fields.String(allow_none=True)
    text = fields.String(allow_none=True)
    upload_key = fields.UUID(data_key="uploadKey", allow_none=True)
    email = fields.String(allow_none=True)


class BlockSchema(RecordSchema):
    page_id = fields.UUID(data_key="pageId")
    type = fields.String()
    position = fields.Integer()
    title = fields.String(allow_none=True)
    url = fields.String(allow_none=True)
    text = fields.String(allow_none=True)
    upload_key = fields.UUID(data_key="uploadKey", allow_none=True)
    email = fields.String(allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "page_id", "type", "position", "title", "url", "text", "upload_key", "email", "livemode",
                  "created_at", "updated_at")


PAGE_FIELDS = ("id", "slug", "title", "bio", "avatar_upload_key", "theme", "status", "published_at", "public_path",
               "livemode", "created_at", "updated_at")


class PageSchema(RecordSchema):
    slug = fields.String()
    title = fields.String()
    bio = fields.String(allow_none=True)
    avatar_upload_key = fields.UUID(data_key="avatarUploadKey", allow_none=True)
    theme = fields.Nested(ThemeSchema)
    status = fields.String()
    published_at = UtcTimestamp(data_key="publishedAt", allow_none=True)
    public_path = fields.String(data_key="publicPath")
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = PAGE_FIELDS


class PageDetailSchema(PageSchema):
    blocks = fields.List(fields.Nested(BlockSchema))

    class Meta(RecordSchema.Meta):
        fields = PAGE_FIELDS + ("blocks",)


class DaySchema(_Shape):
    day = fields.String()
    views = fields.Integer()
    unique_visitors = fields.Integer(data_key="uniqueVisitors")
    clicks = fields.Integer()
    unique_clicks = fields.Integer(data_key="uniqueClicks")


class BlockClicksSchema(_Shape):
    block_id = fields.UUID(data_key="blockId")
    type = fields.String()
    title = fields.String(allow_none=True)
    clicks = fields.Integer()
    unique_clicks = fields.Integer(data_key="uniqueClicks")
    ctr = fields.Float()


class ReferrerSchema(_Shape):
    referrer = fields.String()
    views = fields.Integer()


class AnalyticsSchema(_Shape):
    page_id = fields.UUID(data_key="pageId")
    from_day = fields.String(data_key="from")
    to_day = fields.String(data_key="to")
    views = fields.Integer()
    unique_visitors = fields.Integer(data_key="uniqueVisitors")
    clicks = fields.Integer()
    unique_clicks = fields.Integer(data_key="uniqueClicks")
    ctr = fields.Float()
    blocks = fields.List(fields.Nested(BlockClicksSchema))
    referrers = fields.List(fields.Nested(ReferrerSchema))
    daily = fields.List(fields.Nested(DaySchema))
