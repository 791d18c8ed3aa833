"""The contract's shapes of templates, their use, collections and hashtag sets."""
from __future__ import annotations

from marshmallow import RAISE, fields, post_dump

from socialpub.posts.schemas import PostSchema
from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class VariableSchema(CompiledSchema):
    class Meta:
        unknown = RAISE
        ordered = True

    name = fields.String(required=True)
    required = fields.Boolean(load_default=False)
    default = fields.String(allow_none=True, load_default=None)
    description = fields.String(allow_none=True, load_default=None)


class TemplateSchema(RecordSchema):
    name = fields.String(required=True)
    kind = fields.String()
    content = fields.String(required=True)
    variables = fields.List(fields.Nested(VariableSchema))
    collection_id = fields.UUID(data_key="collectionId", allow_none=True)
    platforms = fields.List(fields.String())
    hashtag_set_ids = fields.List(fields.UUID(), data_key="hashtagSetIds")
    usage_count = fields.Integer(data_key="usageCount", dump_only=True)
    last_used_at = UtcTimestamp(data_key="lastUsedAt", dump_only=True, allow_none=True)
    livemode = fields.Boolean(dump_only=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "kind", "content", "variables", "collection_id", "platforms", "hashtag_set_ids",
                  "usage_count", "last_used_at", "livemode", "created_at", "updated_at")


class CreatePostSchema(CompiledSchema):
    class Meta:
        unknown = RAISE

    platforms = fields.List(fields.String(), required=True)
    scheduled_at = UtcTimestamp(data_key="scheduledAt", allow_none=True, load_default=None)


class TemplateUseSchema(CompiledSchema):
    class Meta:
        unknown = RAISE

    variables = fields.Dict(keys=fields.String(), values=fields.String(), load_default=dict)
    platform = fields.String(load_default=None)
    create_post = fields.Nested(CreatePostSchema, data_key="createPost", load_default=None)


class TemplateUseResultSchema(CompiledSchema):
    class Meta:
        ordered = True

    content = fields.String()
    hashtags = fields.List(fields.String())
    post = fields.Nested(PostSchema, allow_none=True)

    @post_dump
    def drop_absent_post(self, data, **kwargs):
        # A use without `createPost` made no post: the field is absent, not null.
        if data.get("post") is None:
            data.pop("post", None)
        return data


class CollectionSchema(RecordSchema):
    name = fields.String(required=True)
    description = fields.String(allow_none=True)
    template_count = fields.Integer(data_key="templateCount", dump_only=True)
    livemode = fields.Boolean(dump_only=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "description", "template_count", "livemode", "created_at", "updated_at")


class HashtagSetSchema(RecordSchema):
    name = fields.String(required=True)
    hashtags = fields.List(fields.String(), required=True)
    livemode = fields.Boolean(dump_only=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "hashtags", "livemode", "created_at", "updated_at")
