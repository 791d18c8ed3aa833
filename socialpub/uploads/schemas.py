"""The contract's shapes of an upload request, a presigned upload and a download URL."""
from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from socialpub.serialization import CompiledSchema, UtcTimestamp


class PresignedUploadCreateSchema(Schema):
    class Meta:
        unknown = RAISE
        ordered = True

    filename = fields.String(required=True)
    content_type = fields.String(data_key="contentType", required=True)
    size = fields.Integer(required=True, strict=True)


class PresignedUploadSchema(CompiledSchema):
    class Meta:
        ordered = True

    key = fields.String()
    upload_url = fields.String(data_key="uploadUrl")
    method = fields.String()
    headers = fields.Raw()
    expires_at = UtcTimestamp(data_key="expiresAt")


class DownloadUrlSchema(CompiledSchema):
    class Meta:
        ordered = True

    url = fields.String()
    expires_at = UtcTimestamp(data_key="expiresAt")
