"""Workspaces: the tenant every record belongs to, and its plan."""
from __future__ import annotations


from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TimestampedMixin


class Workspace(TimestampedMixin, Base):
    __tablename__ = "workspaces"

    name: Mapped[str] = mapped_column(String(200), nullable=False)
    plan: Mapped[str] = mapped_column(String(20), nullable=False)
