"""The sweep of unfinished uploads: a pending upload whose bytes have not arrived
SOCIALPUB_UPLOAD_PENDING_SECONDS (a day) after it was asked for is claimed
(socialpub.claims) and removed with whatever was half-sent; on S3, one whose bytes
did arrive meanwhile is found ready instead."""
from __future__ import annotations

import datetime as dt
import logging
import uuid

from sqlalchemy import and_, or_, select

from persistence.uploads import Upload, UploadStatus
from socialpub import claims, clock
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope
from socialpub.uploads.service import arrived, remove

logger = logging.getLogger("socialpub.uploads")
BATCH = 500
LEASE_SECONDS = 300


def dispatch(*, database, queue, settings, run) -> int:
    """Claims up to BATCH unfinished uploads past their day and hands them to `run`
    (token, ids), one job; returns how many were handed out."""
    now = clock.now()
    cutoff = now - dt.timedelta(seconds=settings.upload_pending_seconds)
    due = and_(Upload.status == UploadStatus.PENDING, Upload.created_at < cutoff,
               or_(Upload.lease_until.is_(None), Upload.lease_until < now))
    token = str(uuid.uuid4())
    with database.transaction() as session:
        ids = claims.claim(session, Upload, due, order_by=Upload.created_at, limit=BATCH,
                           values={"lease_until": now + dt.timedelta(seconds=LEASE_SECONDS), "claim_token": token})
    if not ids:
        return 0
    return claims.hand_out(database=database, queue=queue, run=run, model=Upload, slices=[(token, ids)],
                           job_name="uploads-sweep")


def remove_unfinished(*, database, settings, token: str, ids) -> int:
    """Removes each claimed upload still pending under `token`, each in a transaction
    of its own; a store that cannot be reached leaves the upload to a later sweep."""
    removed = 0
    for upload_id in ids:
        try:
            with database.transaction() as session:
                upload = session.execute(
                    select(Upload).where(Upload.id == uuid.UUID(str(upload_id)), Upload.claim_token == token,
                                         Upload.status == UploadStatus.PENDING)
                ).scalar_one_or_none()
                if upload is None or arrived(session, settings, upload):
                    continue
                scope = TenantScope.for_job(session, upload.workspace_id, upload.livemode, job="uploads sweep")
                remove(session, settings, scope.get(Upload, upload.id, resource="upload"), scope=scope)
                removed += 1
        except ApiError:
            logger.warning("an unfinished upload could not be removed; a later sweep tries again",
                           extra={"upload_id": str(upload_id)}, exc_info=True)
    return removed
