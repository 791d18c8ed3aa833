"""The link-in-bio area's job: the periodic flush of buffered views and clicks into
the daily counts (socialpub.linkinbio.flushing), in the scheduler's own thread: in
the embedded default that is the serving process, whose own buffer it flushes."""
from __future__ import annotations

from socialpub.linkinbio import flushing
from workers import context
from workers.registry import periodic


@periodic(every="linkinbio_flush_interval_seconds", in_scheduler=True)
def flush_page_counts() -> int:
    """Adds the views and clicks recorded since the last flush."""
    return flushing.flush(database=context.database(), settings=context.settings())
