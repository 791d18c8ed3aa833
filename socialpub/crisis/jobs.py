"""The crisis area's jobs: the notifications' dispatcher claims due notifications
periodically, and each slice is sent on the queue; expired window counters are
pruned hourly. They take the database, queue and settings from workers.context."""
from __future__ import annotations

from socialpub import clock
from socialpub.crisis import evaluation, notifications
from workers import context
from workers.registry import job, periodic


@job
def send_crisis_notifications(token: str, notification_ids: list[str]) -> dict[str, int]:
    """Emails a claimed slice of notifications, one at a time, while the claim is ours."""
    return notifications.send_slice(
        database=context.database(), settings=context.settings(), token=token, notification_ids=notification_ids,
    )


# A short database claim, in the scheduler's own thread: due notifications are found
# while the queue is down, and their claims come back if it cannot take them.
@periodic(every="crisis_notify_interval_seconds", in_scheduler=True)
def dispatch_crisis_notifications() -> int:
    """Hands due notifications (new ones and retries) to sending jobs, a slice each."""
    return notifications.dispatch_due(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=send_crisis_notifications,
    )


@periodic(every=3600)
def prune_crisis_counters() -> int:
    """Deletes the window counters no rule reads any more (older than its 25 windows)."""
    with context.database().transaction() as session:
        return evaluation.prune_counters(session, now=clock.now())
