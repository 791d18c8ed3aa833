"""`socialpub worker`: an RQ worker process (workers/worker.py does the work)."""
from __future__ import annotations

from socialpub.cli.common import UsageError, add_command


def worker(args, settings):
    if not settings.redis_url:
        raise UsageError("socialpub worker needs REDIS_URL (the embedded default runs jobs inside `socialpub serve`)")
    # Imported here, not at the top: it brings in rq and redis (a quarter of a second),
    # which no other command needs.
    from workers import worker as rq_worker

    rq_worker.run(settings)


def register(commands) -> None:
    add_command(
        commands, "worker", help="run an RQ worker and the periodic scheduler (needs REDIS_URL)", run=worker,
        json_output=False,
    )
