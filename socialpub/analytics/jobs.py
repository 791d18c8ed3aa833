"""The analytics area's jobs: two periodic passes of the dispatcher run on the queue
(never in a request): a frequent one that hands what is due to collecting jobs, a
slice each, and the slow enrolment sweep behind it. They take the database, queue
and settings from workers.context.
"""
from __future__ import annotations

from socialpub.analytics import dispatch, runner
from socialpub.connectors.registry import connector_for
from workers import context
from workers.registry import job, periodic


@job
def collect_post_metrics(token: str, tracked_ids: list[str]) -> dict[str, int]:
    """Measures a claimed slice of published targets, one snapshot per bucket."""
    return runner.run_post_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, tracked_ids=tracked_ids,
    )


@job
def collect_account_metrics(token: str, tracked_ids: list[str]) -> dict[str, int]:
    """Measures the followers of a claimed slice of accounts, once per day each."""
    return runner.run_account_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, tracked_ids=tracked_ids,
    )


# Cheap when little is due (the index on next_due_at); a large backlog (the top of
# each hour and day) can take seconds to claim, so it runs on the queue rather than in
# the scheduler's thread.
# Targets enrolled when their publication was recorded (socialpub.analytics.subscribers)
# are due at once, and measured within seconds.
@periodic(every="analytics_claim_interval_seconds")
def claim_due_metrics() -> int:
    """Claims due targets and accounts and hands them to collecting jobs, a slice each."""
    return dispatch.claim_and_hand_out(
        database=context.database(), queue=context.queue(), settings=context.settings(),
        post_job=collect_post_metrics, account_job=collect_account_metrics,
    )


# The backstop: enrols whatever published targets enrolment at publication missed
# (those published before it existed, or by a process that did not enrol them), then
# hands out what is due as claim_due_metrics does. Enrolling can take seconds for a
# large backlog, so it runs on the queue; claims a stopped run left behind come back
# when their leases run out.
@periodic(every="analytics_snapshot_interval_seconds")
def snapshot_metrics() -> int:
    """Enrols newly published targets and hands what is due to collecting jobs."""
    return dispatch.dispatch(
        database=context.database(), queue=context.queue(), settings=context.settings(),
        post_job=collect_post_metrics, account_job=collect_account_metrics,
    )
