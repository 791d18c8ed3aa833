"""The contract's shape of the brand context."""
from __future__ import annotations

from marshmallow import Schema, fields

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
