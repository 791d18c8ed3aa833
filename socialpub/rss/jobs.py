"""The rss area's jobs: the dispatcher claims due feeds periodically, and each fetch
runs on the queue. They take the database, queue and settings from workers.context."""
from __future__ import annotations

from socialpub.rss import fetching
from workers import context
from workers.registry import job, periodic


@job
def fetch_feed(feed_id: str, token: str) -> str:
    """One fetch of one feed, while its lease is ours."""
    return fetching.fetch_feed(database=context.database(), feed_id=feed_id, token=token, settings=context.settings())


# A short database claim, in the scheduler's own thread: due feeds are found while the
# queue is down, and their claims run out and come back if it cannot take them.
@periodic(every="rss_dispatch_interval_seconds", in_scheduler=True)
def dispatch_feed_fetches() -> int:
    """Hands each due active feed to one fetch job."""
    return fetching.dispatch_due_feeds(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=fetch_feed,
    )
