"""Workspace members who sign in to the dashboard, and the workspace's brand context."""
from __future__ import annotations

from persistence.models import Base  # noqa: F401
