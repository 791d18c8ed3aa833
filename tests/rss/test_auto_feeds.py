"""An auto feed publishes its new items in the fetch's own transaction, each behind a
savepoint: one the post rules refuse stays `new` and the others go out; it is tried
again by the next fetches, a bounded number of times, then left to a person; items
left `new` by an interrupted fetch of an earlier version are taken up; items that
came in while the feed was in review mode never are."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select, update

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.posts import Post
from persistence.rss import RssItem
from socialpub.rss import fetching
from tests.rss.helpers import API, feed, fetch, follow, items, stored_feed
from tests.support.feed_server import rss2


def fresh(count: int, *, start: int = 0, **fields) -> list[dict]:
    return [dict(title=f"Fresh {number}", link=f"https://example.com/fresh/{number}", guid=f"fresh-{number}",
                 pubDate=f"Sat, {10 + number:02d} Dec 2026 10:00:00 GMT", **fields)
            for number in reversed(range(start, start + count))]


def primed_auto_feed(client, key, jobs, feeds, fake_clock, **fields) -> tuple[str, str]:
    url = feeds.serve("/auto.xml", rss2("Blog", [dict(title="Old", guid="old", link="https://example.com/old")]))
    created = follow(client, key, url, mode="auto", **fields)
    jobs.run()
    assert feed(client, key, created["id"])["itemCounts"] == {"new": 0, "published": 0, "skipped": 1}
    fake_clock.advance(3600)
    return created["id"], url


def attempts(session, feed_id) -> dict[str, tuple[str, int]]:
    session.expire_all()
    return {item.title: (item.status, item.publish_attempts) for item in session.execute(
        select(RssItem).where(RssItem.feed_id == uuid.UUID(feed_id), RssItem.title != "Old")).scalars()}


def set_twitter(session, status: str) -> None:
    session.execute(update(ConnectedAccount).where(ConnectedAccount.platform == "twitter").values(status=status))
    session.commit()


def post_count(session) -> int:
    return session.execute(select(func.count()).select_from(Post)).scalar_one()


def test_an_item_the_post_rules_refuse_stays_new_and_the_others_go_out(client, session, key, jobs, feeds,
                                                                       fake_clock):
    # Bluesky counts a link in full: 300 characters at most.
    feed_id, _ = primed_auto_feed(client, key, jobs, feeds, fake_clock, platforms=["bluesky"])
    too_long = dict(title="Too long", guid="too-long", link="https://example.com/" + "x" * 400,
                    pubDate="Sun, 11 Dec 2026 09:00:00 GMT")
    feeds.serve("/auto.xml", rss2("Blog", fresh(3, start=0) + [too_long]))
    fetched = fetch(client, key, jobs, feed_id)
    assert fetched["lastError"] is None
    assert fetched["itemCounts"] == {"new": 1, "published": 3, "skipped": 1}
    assert attempts(session, feed_id)["Too long"] == ("new", 1)
    assert post_count(session) == 3


def test_a_refused_item_is_tried_a_bounded_number_of_times_then_left_to_a_person(client, session, key, jobs,
                                                                                 feeds, fake_clock):
    feed_id, _ = primed_auto_feed(client, key, jobs, feeds, fake_clock)
    set_twitter(session, AccountStatus.NEEDS_REAUTH)
    feeds.serve("/auto.xml", rss2("Blog", fresh(1)))
    for tries in range(1, fetching.AUTO_PUBLISH_TRIES + 1):
        fetched = fetch(client, key, jobs, feed_id)
        assert fetched["lastError"] is None
        assert attempts(session, feed_id) == {"Fresh 0": ("new", tries)}
        fake_clock.advance(3600)
    set_twitter(session, AccountStatus.ACTIVE)
    fetch(client, key, jobs, feed_id)
    assert attempts(session, feed_id) == {"Fresh 0": ("new", fetching.AUTO_PUBLISH_TRIES)}, "left to a person"
    assert post_count(session) == 0
    [item] = items(client, key, feed_id, status="new")
    response = client.post(f"{API}/{feed_id}/items/{item['id']}/publish", headers=key.headers, json={"mode": "now"})
    assert response.status_code == 200, response.text


def test_an_account_back_before_the_last_try_lets_the_item_through(client, session, key, jobs, feeds, fake_clock):
    feed_id, _ = primed_auto_feed(client, key, jobs, feeds, fake_clock)
    set_twitter(session, AccountStatus.NEEDS_REAUTH)
    feeds.serve("/auto.xml", rss2("Blog", fresh(1)))
    fetch(client, key, jobs, feed_id)
    set_twitter(session, AccountStatus.ACTIVE)
    feeds.serve("/auto.xml", rss2("Blog", fresh(2)))
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, feed_id)
    assert fetched["itemCounts"] == {"new": 0, "published": 2, "skipped": 1}
    assert attempts(session, feed_id) == {"Fresh 0": ("published", 2), "Fresh 1": ("published", 1)}
    # The one left over went first.
    by_title = {item["title"]: item["postId"] for item in items(client, key, feed_id)}
    created = {str(post.id): post.created_at for post in session.execute(select(Post)).scalars()}
    assert created[by_title["Fresh 0"]] <= created[by_title["Fresh 1"]]


def test_items_left_new_by_an_interrupted_fetch_are_taken_up_and_review_items_are_not(client, session, key, jobs,
                                                                                      feeds, fake_clock):
    url = feeds.serve("/auto.xml", rss2("Blog", fresh(1)))
    created = follow(client, key, url)  # review mode first
    jobs.run()
    feed_id = created["id"]
    assert feed(client, key, feed_id)["itemCounts"]["new"] == 1
    response = client.patch(f"{API}/{feed_id}", headers=key.headers, json={"mode": "auto"})
    assert response.status_code == 200, response.text
    fake_clock.advance(3600)
    fetch(client, key, jobs, feed_id)  # primes the auto feed
    primed_at = stored_feed(session, feed_id).primed_at
    # What an earlier version left when it was killed between storing an item and
    # publishing it: an item read after the feed was primed, never tried.
    row = stored_feed(session, feed_id)
    later = primed_at + dt.timedelta(seconds=1)
    session.add(RssItem(workspace_id=row.workspace_id, livemode=row.livemode, feed_id=row.id,
                        dedupe_key="f" * 64, guid="left", title="Left new", link="https://example.com/left",
                        status="new", created_at=later, updated_at=later))
    session.commit()
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, feed_id)
    assert fetched["itemCounts"] == {"new": 1, "published": 1, "skipped": 0}
    statuses = {item["title"]: item["status"] for item in items(client, key, feed_id)}
    assert statuses == {"Left new": "published", "Fresh 0": "new"}
