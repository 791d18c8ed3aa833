"""The competitors area's jobs: the dispatcher claims the competitors due a refresh of
their public profiles, periodically; each refresh runs on the queue. They take the
database, queue and settings from workers.context."""
from __future__ import annotations

from socialpub.competitors import refresh
from workers import context
from workers.registry import job, periodic


@job
def refresh_competitor(competitor_id: str, token: str) -> dict:
    """One refresh of one competitor's public profiles, while its lease is ours."""
    return refresh.refresh_competitor(database=context.database(), settings=context.settings(),
                                      competitor_id=competitor_id, token=token)


# A short database claim, in the scheduler's own thread: due competitors are found
# while the queue is down, and their claims run out and come back if it cannot take them.
@periodic(every="competitors_dispatch_interval_seconds", in_scheduler=True)
def dispatch_competitor_refreshes() -> int:
    """Hands each competitor due a refresh to one job."""
    return refresh.dispatch_refreshes(database=context.database(), queue=context.queue(), settings=context.settings(),
                                      run=refresh_competitor)
