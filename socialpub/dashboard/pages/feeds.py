"""Feeds: the workspace's RSS feeds of one mode, each paused, resumed or fetched now
(a fetch is handed to the job queue at once), through the RSS service of the API."""
from __future__ import annotations

from flask import render_template

from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.request import current_queue, current_runtime
from socialpub.rss import service as feeds

SHOWN = 100


@member_page("/feeds/")
def feeds_page():
    found = feeds.list_feeds.in_scope(member_scope(), limit=SHOWN)
    return render_template("dashboard/feeds.html", feeds=found.items, total=found.total, mode=chosen_mode())


@member_page("/feeds/<feed_id>/<any(pause, resume):action>", methods=["POST"])
def feeds_toggle(feed_id, action):
    change = feeds.pause_feed if action == "pause" else feeds.resume_feed
    feed = change.in_scope(member_scope(), feed_id=feed_id)
    said = "Paused" if action == "pause" else "Resumed"
    return acted(f"feed.{action}d", f"{said} the feed {feed.title or feed.url}.", "dashboard.feeds_page",
                 target_id=feed.id)


@member_page("/feeds/<feed_id>/fetch", methods=["POST"])
def feeds_fetch(feed_id):
    runtime = current_runtime()
    feed = feeds.fetch_now.in_scope(member_scope(), database=runtime.database,
                           queue=current_queue(), settings=runtime.settings, feed_id=feed_id)
    return acted("feed.fetched", f"Fetching the feed {feed.title or feed.url} now; new items appear as posts or for "
                 "review when it is done.", "dashboard.feeds_page", target_id=feed.id)
