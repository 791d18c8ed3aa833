"""The publishing area's jobs: the dispatcher runs periodically, and hands each slice
of claims to a job on the queue. They take the database, queue and settings from
workers.context.

RQ resolves a queued job by its function's import path: jobs queued while these lived
in workers.jobs fail to resolve once that is gone, and their claims are handed out
again when their leases run out.
"""
from __future__ import annotations

from socialpub.connectors.registry import connector_for
from socialpub.publishing import dispatch, first_comments, publications
from workers import context
from workers.registry import job, periodic


@job
def publish_targets(token: str, target_ids: list[str]) -> dict[str, str]:
    """Publishes a slice of claimed targets, several calls in flight at once."""
    return publications.run_publish_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, target_ids=target_ids,
    )


@job
def post_first_comments(token: str, target_ids: list[str]) -> dict[str, str]:
    """Posts the first comments of a slice of claimed targets, several calls in flight at once."""
    return first_comments.run_comment_slice(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        token=token, target_ids=target_ids,
    )


# The job the dispatcher enqueues for each kind of claim.
SLICE_JOBS = {dispatch.PUBLISH.name: publish_targets, dispatch.COMMENT.name: post_first_comments}


# A short database claim, run in the scheduler's own thread rather than through the
# queue, so that a queue that is down does not stop it: it then claims nothing, and
# gives back at once what the queue refused.
@periodic(every="dispatch_interval_seconds", in_scheduler=True)
def dispatch_due() -> int:
    """Claims due targets and first comments and enqueues a job for each slice."""
    return dispatch.dispatch_due(
        database=context.database(), queue=context.queue(), settings=context.settings(), slice_jobs=SLICE_JOBS,
    )


# One target a job: what the dispatcher enqueued before slices, kept for such jobs
# still waiting in a queue across an upgrade, and what tests run directly. RQ resolves
# a job by its import path, and these moved here from workers.jobs: a job queued under
# the old path does not find them, and its claim is handed out again when its lease
# runs out.
@job
def publish_target(target_id: str, token: str) -> str:
    return publications.run_publish_job(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        target_id=target_id, token=token,
    )


@job
def post_first_comment(target_id: str, token: str) -> str:
    return first_comments.run_comment_job(
        database=context.database(), settings=context.settings(), connector_for=connector_for,
        target_id=target_id, token=token,
    )
