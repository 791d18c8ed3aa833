"""The uploads area's jobs: the periodic sweep of unfinished uploads claims them, and
a job removes each claimed batch. They take the database, queue and settings from
workers.context."""
from __future__ import annotations

from socialpub.uploads import sweeping
from workers import context
from workers.registry import job, periodic


@job
def remove_unfinished_uploads(token: str, ids: list[str]) -> int:
    """Removes the unfinished uploads claimed under `token`."""
    return sweeping.remove_unfinished(database=context.database(), settings=context.settings(), token=token, ids=ids)


@periodic(every="uploads_sweep_interval_seconds")
def sweep_unfinished_uploads() -> int:
    """Claims the uploads still pending a day after they were asked for."""
    return sweeping.dispatch(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=remove_unfinished_uploads,
    )
