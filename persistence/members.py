"""Workspace members who sign in to the dashboard."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import ForeignKey, Integer, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TimestampedMixin
from persistence.types import UtcDateTime


class Member(TimestampedMixin, Base):
    """A person who signs in to the dashboard of one workspace.

    Emails are unique across the service (stored lower-cased), so signing in needs
    only an email and a password and never asks which workspace. Not a tenant table:
    a member sees both modes of their workspace.
    """

    __tablename__ = "members"

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False, index=True
    )
    email: Mapped[str] = mapped_column(String(254), nullable=False, unique=True)
    # argon2id, in the PHC string format argon2-cffi writes (parameters included, so
    # hashes made with older parameters still verify and are upgraded on sign-in).
    password_hash: Mapped[str] = mapped_column(String(200), nullable=False)
    last_sign_in_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # Carried in each dashboard session cookie; signing out bumps it, so a copy of an
    # old cookie (the cookie itself is all the server keeps) stops working at once.
    session_version: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # Set by an operator (`socialpub user disable`): the member cannot sign in, and their
    # sessions ended when it was set.
    disabled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
