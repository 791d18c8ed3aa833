"""Handlers of the `uploads` tag."""
from socialpub import envelope
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_runtime, current_session, load
from socialpub.uploads import service as uploads_service
from socialpub.uploads.schemas import DownloadUrlSchema, PresignedUploadCreateSchema, PresignedUploadSchema

create_schema = PresignedUploadCreateSchema()
presigned_schema = PresignedUploadSchema()
download_schema = DownloadUrlSchema()


def create_presigned_upload(body):
    fields = load(create_schema, body)
    presigned = uploads_service.create_presigned(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, **fields,
    )
    return envelope.created(presigned_schema.dump(presigned), location=f"{API_PREFIX}/uploads/{presigned.key}/url")


def get_upload_url(key):
    url = uploads_service.download_url(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, key=key,
    )
    return envelope.ok(download_schema.dump(url))


def delete_upload(key):
    deleted = uploads_service.delete_upload(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, key=key,
    )
    return envelope.deleted(deleted)
