"""`socialpub upload list|show|delete`: a workspace's uploads (the id is the API's key);
deleting removes the object and its image variants."""
from __future__ import annotations

from persistence.uploads import Upload
from socialpub.cli.common import isoformat, mode_name
from socialpub.cli.records import Action, Noun, scoped_get
from socialpub.uploads import service


def dump(upload) -> dict:
    return {
        "id": str(upload.id), "livemode": upload.livemode, "mode": mode_name(upload.livemode),
        "filename": upload.filename, "contentType": upload.content_type, "size": upload.size,
        "status": upload.status, "width": upload.width, "height": upload.height,
        "refusedReason": upload.refused_reason, "completedAt": isoformat(upload.completed_at),
        "createdAt": isoformat(upload.created_at),
    }


def delete(*, scope, record_id, settings, **_):
    return service.delete_upload.in_scope(scope, settings=settings, key=record_id)


NOUN = Noun(
    name="upload", help="uploaded files", model=Upload, resource="upload",
    list_records=service.recent_uploads, show_record=scoped_get(Upload, "upload"), dump=dump,
    columns=("id", "livemode", "status", "contentType", "size", "filename", "createdAt"),
    actions=(Action("delete", "delete an upload, its object and its variants", delete, done="Deleted"),),
)
register = NOUN.register
