"""The bulk area's jobs: a run of an operation on the queue, and the sweeper that
queues a run again for operations whose run was lost. They take the database, queue
and settings from workers.context."""
from __future__ import annotations

from socialpub.bulk import runner
from workers import context
from workers.registry import job, periodic


@job
def run_bulk_operation(operation_id: str) -> str:
    """Applies a bulk operation, chunk by chunk, until it is finished."""
    return runner.run_operation(database=context.database(), settings=context.settings(), operation_id=operation_id)


# A short database claim, in the scheduler's own thread: lost runs are found while
# the queue is down, and queued again as soon as it is back.
@periodic(every=5.0, in_scheduler=True)
def resume_bulk_operations() -> int:
    """Queues a run for each unfinished bulk operation whose run was lost."""
    return runner.resume_stalled(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=run_bulk_operation,
    )
