"""Feeds: the workspace's RSS feeds of one mode, each paused, resumed or fetched now
(a fetch is handed to the job queue at once), through the RSS service of the API."""
from __future__ import annotations

from socialpub.dashboard.areas import RecordsPage
from socialpub.dashboard.plumbing import member_page
from socialpub.request import current_queue, current_runtime
from socialpub.rss import service as feeds

FEEDS = RecordsPage("dashboard/feeds.html", "feeds", feeds.list_feeds, "dashboard.feeds_page")


@member_page("/feeds/")
def feeds_page():
    return FEEDS.show()


@member_page("/feeds/<feed_id>/<any(pause, resume):action>", methods=["POST"])
def feeds_toggle(feed_id, action):
    said = "Paused" if action == "pause" else "Resumed"
    return FEEDS.change(feeds.pause_feed if action == "pause" else feeds.resume_feed, f"feed.{action}d",
                        lambda feed: f"{said} the feed {feed.title or feed.url}.", feed_id=feed_id)


@member_page("/feeds/<feed_id>/fetch", methods=["POST"])
def feeds_fetch(feed_id):
    runtime = current_runtime()
    return FEEDS.change(feeds.fetch_now, "feed.fetched",
                        lambda feed: f"Fetching the feed {feed.title or feed.url} now; new items appear as posts or "
                        "for review when it is done.",
                        database=runtime.database, queue=current_queue(), settings=runtime.settings, feed_id=feed_id)
