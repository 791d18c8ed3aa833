"""The contract's shape of a connected account."""
from __future__ import annotations

from marshmallow import fields

from socialpub.serialization import RecordSchema


class AccountSchema(RecordSchema):
    platform = fields.String()
    handle = fields.String()
    connector = fields.String()
    status = fields.String()
    status_reason = fields.String(data_key="statusReason", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "platform", "handle", "connector", "status", "status_reason", "livemode", "created_at", "updated_at")
