"""Uploads: the workspace's uploaded files of one mode, newest first, each deleted
(its object and image variants too) through the uploads service of the API."""
from __future__ import annotations

from flask import render_template

from socialpub.dashboard.areas import acted, chosen_mode, member_principal
from socialpub.dashboard.plumbing import member_page
from socialpub.request import current_runtime, current_session
from socialpub.uploads import service as uploads

SHOWN = 100


@member_page("/uploads/")
def uploads_page():
    found = uploads.recent_uploads(session=current_session(), principal=member_principal(), limit=SHOWN)
    return render_template("dashboard/uploads.html", uploads=found, mode=chosen_mode())


@member_page("/uploads/<upload_id>/delete", methods=["POST"])
def uploads_delete(upload_id):
    gone = uploads.delete_upload(session=current_session(), principal=member_principal(),
                                 settings=current_runtime().settings, key=upload_id)
    return acted("upload.deleted", "Deleted the upload and its image variants.", "dashboard.uploads_page",
                 target_id=gone)
