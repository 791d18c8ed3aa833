"""The analytics area's jobs: the snapshot dispatcher runs periodically on the queue
(never in a request), and hands each slice of due targets or accounts to a job. They
take the database, queue and settings from workers.context."""
from __future__ import annotations

from socialpub.analytics import collection
from socialpub.connectors.registry import connector_for
from workers import context
from workers.registry import job, periodic


@job
def collect_post_metrics(token: str, tracked_ids: list[str]) -> dict[str, int]:
    """Measures a claimed slice of published targets, one snapshot per bucket."""
    return collection.run_post_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, tracked_ids=tracked_ids,
    )


@job
def collect_account_metrics(token: str, tracked_ids: list[str]) -> dict[str, int]:
    """Measures the followers of a claimed slice of accounts, once per day each."""
    return collection.run_account_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, tracked_ids=tracked_ids,
    )


# Enrolling and claiming can take seconds for a large backlog, so it runs on the queue
# rather than in the scheduler's thread; claims a stopped run left behind come back
# when their leases run out.
@periodic(every="analytics_snapshot_interval_seconds")
def snapshot_metrics() -> int:
    """Enrols newly published targets and hands what is due to collecting jobs."""
    return collection.dispatch(
        database=context.database(), queue=context.queue(), settings=context.settings(),
        post_job=collect_post_metrics, account_job=collect_account_metrics,
    )
