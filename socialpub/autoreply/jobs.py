"""The autoreply area's jobs: the dispatcher claims due account polls periodically,
and each poll runs on the queue. They take the database, queue and settings from
workers.context."""
from __future__ import annotations

from socialpub.autoreply import polling
from socialpub.connectors.registry import connector_for
from workers import context
from workers.registry import job, periodic


@job
def poll_account(cursor_id: str, token: str) -> dict[str, int]:
    """One notifications poll of one account, while its lease is ours."""
    return polling.poll_account(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        cursor_id=cursor_id, token=token,
    )


# A short database claim, in the scheduler's own thread: due accounts are found while
# the queue is down, and their claims run out and come back if it cannot take them.
@periodic(every="autoreply_poll_interval_seconds", in_scheduler=True)
def dispatch_account_polls() -> int:
    """Hands each active account due a poll to one job."""
    return polling.dispatch_polls(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=poll_account,
    )
