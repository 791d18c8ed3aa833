"""Webhook endpoints and their deliveries."""
from __future__ import annotations

from persistence.models import Base  # noqa: F401
