"""The images area's reactions to the uploads' changes (socialpub.announcements),
imported by the area registry."""
from __future__ import annotations

from socialpub.announcements import Change
from socialpub.images.service import PUBLIC_SOURCES
from socialpub.images.variants import cache_for
from socialpub.uploads.changes import UPLOADS
from workers import context


@UPLOADS.subscribe("deleted")
def drop_variants(change: Change) -> None:
    """An upload removed: this machine's variants of it go, and this process stops
    serving its signed URLs at once (other processes within seconds)."""
    cache_for(context.settings()).purge(change.record.id)
    PUBLIC_SOURCES.forget(change.record.id)
