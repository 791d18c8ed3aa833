"""The idempotency area's jobs. They take the database from workers.context."""
from __future__ import annotations

from socialpub.idempotency import service as idempotency
from workers import context
from workers.registry import periodic


@periodic(every=3600.0)
def purge_expired_idempotency_records() -> int:
    """Deletes kept Idempotency-Key responses older than 24 hours."""
    with context.database().transaction() as session:
        return idempotency.purge_expired(session=session)
