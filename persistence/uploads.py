"""Uploads: files a workspace sends through a presigned URL, kept in the store
(socialpub.uploads.storage) under their key, which is the record's id."""
from __future__ import annotations

import datetime as dt
import enum

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.types import UtcDateTime


class UploadStatus(enum.StrEnum):
    # Asked for: its bytes have not arrived (or arrived and were refused).
    PENDING = "pending"
    # Its bytes arrived, of the declared size and type: readable, servable.
    READY = "ready"


class Upload(TenantMixin, LeasedMixin, Base):
    """One upload. Its `id` is the key of the API (`/uploads/{key}`, `/images/{key}`)
    and of its object in the store (`originals/<id>`). A pending upload past its
    deadline is claimed (socialpub.claims) and removed by the sweep."""

    __tablename__ = "uploads"

    filename: Mapped[str] = mapped_column(String(255), nullable=False)
    content_type: Mapped[str] = mapped_column(String(40), nullable=False)
    # The size declared, in bytes: the upload must be exactly this long.
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=UploadStatus.PENDING)
    # When the presigned upload URL stops working.
    upload_expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, nullable=False)
    # Why the bytes that arrived were refused (the store's path: checked after the fact).
    refused_reason: Mapped[str | None] = mapped_column(String(500))
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # The image's size in pixels, read from its header when it arrived.
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        Index("ix_uploads_status_created", "status", "created_at"),
    )
