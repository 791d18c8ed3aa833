"""The listening area's jobs: the dispatcher claims the monitors due a poll of the
platforms' public search and the reports no job holds, periodically; each poll and
each report's build runs on the queue. They take the database, queue and settings
from workers.context."""
from __future__ import annotations

from socialpub.listening import building, polling
from workers import context
from workers.registry import job, periodic


@job
def poll_monitor(monitor_id: str, token: str) -> dict:
    """One poll of one monitor's sources, while its lease is ours."""
    return polling.poll_monitor(database=context.database(), settings=context.settings(), monitor_id=monitor_id,
                                token=token)


@job
def build_report(report_id: str, token: str) -> str:
    """One report's build, while its lease is ours."""
    return building.build_report(database=context.database(), report_id=report_id, token=token)


# Short database claims, in the scheduler's own thread: due monitors and lost reports
# are found while the queue is down, and their claims run out and come back if it
# cannot take them.
@periodic(every="listening_dispatch_interval_seconds", in_scheduler=True)
def dispatch_monitor_polls() -> int:
    """Hands each enabled monitor due a poll to one job."""
    return polling.dispatch_polls(database=context.database(), queue=context.queue(), settings=context.settings(),
                                  run=poll_monitor)


@periodic(every="listening_dispatch_interval_seconds", in_scheduler=True)
def dispatch_pending_reports() -> int:
    """Hands each pending report no job holds to one build job."""
    return building.dispatch_pending(database=context.database(), queue=context.queue(), settings=context.settings(),
                                     run=build_report)
