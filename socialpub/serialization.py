"""What every area's marshmallow schemas share (cross-cutting): the timestamp field,
the record base (id, createdAt, updatedAt) and the error object of a record.

Each area's `schemas.py` holds its resources' schemas: the only mapping between model
attribute names and contract field names."""
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


def error_object(code, message):
    return {"code": code, "message": message} if code else None
