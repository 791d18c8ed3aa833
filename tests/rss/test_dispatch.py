"""The periodic dispatcher: due active feeds are fetched on the queue, each on its
own, and come due again after their interval."""
from __future__ import annotations

from socialpub.rss import fetching
from socialpub.rss.jobs import dispatch_feed_fetches, fetch_feed
from tests.rss.helpers import feed, follow, rss_feed
from workers.registry import periodic_jobs


def _dispatch(app, db, settings) -> int:
    runtime = app.app.extensions["socialpub"]
    return fetching.dispatch_due_feeds(database=db, queue=runtime.queue, settings=settings, run=fetch_feed)


def test_the_dispatcher_is_a_periodic_job_in_the_scheduler():
    [found] = [job for job in periodic_jobs() if job.function is dispatch_feed_fetches]
    assert found.in_scheduler and found.every == "rss_dispatch_interval_seconds"


def test_due_feeds_are_fetched_and_one_failure_does_not_stop_the_others(app, client, db, settings, key, jobs,
                                                                        feeds, fake_clock):
    good = [follow(client, key, feeds.serve(f"/good{n}.xml", rss_feed(2)))["id"] for n in range(3)]
    bad = follow(client, key, feeds.serve("/bad.xml", "<html><body>gone</body></html>", content_type="text/html"))["id"]
    jobs.run()
    for feed_id in good:
        assert feed(client, key, feed_id)["itemCounts"]["new"] == 2
    assert feed(client, key, bad)["consecutiveFailures"] == 1
    # Nothing is due before the interval has passed.
    assert _dispatch(app, db, settings) == 0
    fake_clock.advance(60 * 60 + 1)
    feeds.serve("/good0.xml", rss_feed(3))
    assert _dispatch(app, db, settings) == 4
    assert _dispatch(app, db, settings) == 0  # claimed: not handed out twice
    jobs.run()
    assert feed(client, key, good[0])["itemCounts"]["new"] == 3
    assert feed(client, key, bad)["consecutiveFailures"] == 2
    assert all(feed(client, key, feed_id)["lastError"] is None for feed_id in good)


def test_paused_and_errored_feeds_are_not_fetched(app, client, db, settings, key, jobs, feeds, fake_clock):
    paused = follow(client, key, feeds.serve("/p.xml", rss_feed(1)))["id"]
    jobs.run()
    client.post(f"/api/v1/rss/feeds/{paused}/pause", headers=key.headers)
    fake_clock.advance(2 * 60 * 60)
    assert _dispatch(app, db, settings) == 0
    client.post(f"/api/v1/rss/feeds/{paused}/resume", headers=key.headers)
    assert _dispatch(app, db, settings) == 1


def test_a_lost_fetch_is_taken_again_once_its_lease_runs_out(app, client, db, settings, key, jobs, feeds,
                                                             fake_clock):
    feed_id = follow(client, key, feeds.serve("/l.xml", rss_feed(1)))["id"]
    jobs.lose_all()  # the queue lost the first fetch
    assert _dispatch(app, db, settings) == 0  # its lease still holds the feed
    fake_clock.advance(settings.rss_lease_seconds + 1)
    assert _dispatch(app, db, settings) == 1
    jobs.run()
    assert feed(client, key, feed_id)["itemCounts"]["new"] == 1
