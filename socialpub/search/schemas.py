"""The contract's shape of a search result."""
from __future__ import annotations

from marshmallow import fields

from socialpub.serialization import CompiledSchema


class SearchResultSchema(CompiledSchema):
    class Meta:
        ordered = True

    index = fields.String()
    id = fields.UUID()
    title = fields.String()
    snippet = fields.String()
    score = fields.Float()
    url = fields.String()
