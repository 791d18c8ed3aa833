"""Job functions. They call the same service functions as the handlers do."""
from __future__ import annotations

from socialpub.services import api_keys
from workers import context


def purge_expired_key_secrets() -> int:
    """Deletes rolled key values whose grace period has ended."""
    with context.database().transaction() as session:
        return api_keys.purge_expired_secrets(session=session)
