"""The encryption key check every process verifies its keys against at start."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base
from persistence.types import UtcDateTime, utcnow


class EncryptionKeyCheck(Base):
    """One row: a Fernet token of a known value, written by the first process to start
    with the keys it runs with, and re-encrypted with the newest key once one is
    added. A process whose keys cannot read it could not read the account secrets
    either, and refuses to start (socialpub.crypto.verify_keys)."""

    __tablename__ = "encryption_key_checks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    token: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow, nullable=False)
