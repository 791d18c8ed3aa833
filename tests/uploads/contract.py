"""The uploads area's records for the contract tests (tests/support/contract.py). The
images area's operations name the same `{key}`: a ready upload, whose bytes are in
the app's store."""
from __future__ import annotations

from persistence.uploads import Upload, UploadStatus
from tests.support.contract import RecordFactory
from tests.uploads.factories import make_upload


def _upload(session, workspace, livemode):
    return make_upload(session, workspace, livemode=livemode).id


def _find_ready_upload(session, key):
    upload = session.get(Upload, key)
    return upload if upload is not None and upload.status == UploadStatus.READY else None


RECORD_FACTORIES = {
    "key": RecordFactory(make=_upload, find=_find_ready_upload),
}
