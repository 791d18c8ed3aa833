"""The keys area's jobs. They take the database from workers.context."""
from __future__ import annotations

from socialpub.keys import service as api_keys
from workers import context
from workers.registry import periodic


@periodic(every=3600.0)
def purge_expired_key_secrets() -> int:
    """Deletes rolled key values whose grace period has ended."""
    with context.database().transaction() as session:
        return api_keys.purge_expired_secrets(session=session)
