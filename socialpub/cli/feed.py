"""`socialpub feed list|show|pause|resume|fetch`: a workspace's RSS feeds. `fetch`
hands the feed to a fetch job at once (on the configured queue) and waits for it in
this process when the queue is the embedded one."""
from __future__ import annotations

from persistence.rss import RssFeed
from socialpub.cli.common import database
from socialpub.cli.records import Action, Noun, by_service, paged
from socialpub.rss import service
from socialpub.rss.schemas import FeedSchema
from workers import context as job_context
from workers.queue import make_queue


def fetch(*, scope, record_id, settings, **_):
    queue = make_queue(settings)
    jobs_database = database(settings)
    job_context.install(jobs_database, queue=queue, settings=settings)
    try:
        feed = service.fetch_now.in_scope(scope, database=jobs_database, queue=queue, settings=settings,
                                          feed_id=record_id)
        scope.session.commit()  # holds nothing while the fetch runs: the feed is read again afterwards
    finally:
        queue.close()  # the embedded queue's fetch finishes before the command does
        jobs_database.dispose()
    return feed


NOUN = Noun(
    name="feed", help="RSS feeds that make posts", model=RssFeed, resource="feed",
    list_records=paged(service.list_feeds), show_record=by_service(service.get_feed, "feed_id"),
    dump=FeedSchema().dump, columns=("id", "livemode", "status", "mode", "url", "lastFetchedAt", "lastError"),
    actions=(
        Action("pause", "pause a feed: it is not fetched until resumed", by_service(service.pause_feed, "feed_id"),
               done="Paused"),
        Action("resume", "resume a paused (or failing) feed: it is fetched now",
               by_service(service.resume_feed, "feed_id"), done="Resumed"),
        Action("fetch", "fetch a feed now", fetch, done="Fetched"),
    ),
)
register = NOUN.register
