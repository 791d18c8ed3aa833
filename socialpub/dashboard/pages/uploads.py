"""Uploads: the workspace's uploaded files of one mode, newest first, each deleted
(its object and image variants too) through the uploads service of the API."""
from __future__ import annotations

from flask import render_template

from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.request import current_runtime
from socialpub.uploads import service as uploads

SHOWN = 100


@member_page("/uploads/")
def uploads_page():
    found = uploads.recent_uploads(scope=member_scope(), limit=SHOWN)
    return render_template("dashboard/uploads.html", uploads=found, mode=chosen_mode())


@member_page("/uploads/<upload_id>/delete", methods=["POST"])
def uploads_delete(upload_id):
    gone = uploads.delete_upload.in_scope(member_scope(), settings=current_runtime().settings, key=upload_id)
    return acted("upload.deleted", "Deleted the upload and its image variants.", "dashboard.uploads_page",
                 target_id=gone)
