"""Turning items into posts, skipping them, and auto feeds."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from persistence.posts import Post
from socialpub import platforms
from tests.rss.helpers import API, fetch, follow, items, rss_feed
from tests.support.errors import assert_envelope
from tests.support.feed_server import rss2


def _review_feed(client, key, jobs, feeds, count=2, **fields):
    created = follow(client, key, feeds.serve("/rss.xml", rss_feed(count)), **fields)
    jobs.run()
    return created["id"], sorted(items(client, key, created["id"]), key=lambda item: item["title"])


def _publish(client, key, feed_id, item_id, **body):
    return client.post(f"{API}/{feed_id}/items/{item_id}/publish", headers=key.headers, json=body)


def _skip(client, key, feed_id, item_id):
    return client.post(f"{API}/{feed_id}/items/{item_id}/skip", headers=key.headers)


def _post(client, key, post_id) -> dict:
    response = client.get(f"/api/v1/posts/{post_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _post_count(session) -> int:
    return session.execute(select(func.count()).select_from(Post)).scalar_one()


def test_publish_as_a_draft_links_the_post_once(client, session, key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds)
    response = _publish(client, key, feed_id, item["id"], mode="draft")
    assert response.status_code == 200, response.text
    published = response.json()["data"]
    assert published["status"] == "published" and published["postId"]
    post = _post(client, key, published["postId"])
    assert post["status"] == "draft" and post["content"] == "Post 0 https://example.com/posts/0"
    assert post["platforms"] == ["twitter"]
    assert_envelope(_publish(client, key, feed_id, item["id"], mode="draft"), 409, "conflict")
    assert_envelope(_skip(client, key, feed_id, item["id"]), 409, "conflict")
    assert _post_count(session) == 1
    assert items(client, key, feed_id, status="published")[0]["postId"] == published["postId"]


def test_an_item_without_author_leaves_no_dangling_by(client, key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds, template="{{title}} by {{author}}")
    response = _publish(client, key, feed_id, item["id"], mode="draft")
    assert response.status_code == 200, response.text
    assert _post(client, key, response.json()["data"]["postId"])["content"] == "Post 0"


def test_skip_then_nothing_more(client, session, key, jobs, feeds):
    feed_id, (item, other) = _review_feed(client, key, jobs, feeds)
    response = _skip(client, key, feed_id, item["id"])
    assert response.status_code == 200 and response.json()["data"]["status"] == "skipped"
    assert_envelope(_skip(client, key, feed_id, item["id"]), 409, "conflict")
    assert_envelope(_publish(client, key, feed_id, item["id"], mode="now"), 409, "conflict")
    assert _post_count(session) == 0
    counts = client.get(f"{API}/{feed_id}", headers=key.headers).json()["data"]["itemCounts"]
    assert counts == {"new": 1, "published": 0, "skipped": 1}


def test_schedule_needs_a_future_time(client, session, key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds)
    assert_envelope(_publish(client, key, feed_id, item["id"], mode="schedule"), 422, "validation_error")
    past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).isoformat()
    assert_envelope(_publish(client, key, feed_id, item["id"], mode="schedule", scheduledAt=past), 422, "validation_error")
    later = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat()
    assert_envelope(_publish(client, key, feed_id, item["id"], mode="draft", scheduledAt=later), 422, "validation_error")
    assert _post_count(session) == 0
    assert items(client, key, feed_id, status="new")[-1]["id"]  # still new after every refusal
    response = _publish(client, key, feed_id, item["id"], mode="schedule", scheduledAt=later)
    assert response.status_code == 200, response.text
    assert _post(client, key, response.json()["data"]["postId"])["status"] == "scheduled"


def test_publish_now_hands_the_post_to_publishing(client, key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds)
    response = _publish(client, key, feed_id, item["id"], mode="now")
    assert response.status_code == 200, response.text
    post = _post(client, key, response.json()["data"]["postId"])
    assert post["status"] == "scheduled" and post["targets"]


def test_the_summary_is_shortened_to_fit_never_the_link(client, key, jobs, feeds):
    long_text = "word " * 400
    entry = dict(title="Long read", link="https://example.com/a/very/long/link/that/stays/whole", guid="long",
                 description=long_text)
    url = feeds.serve("/long.xml", rss2("Blog", [entry]))
    created = follow(client, key, url, template="{{title}}: {{summary}} {{link}}", platforms=["twitter", "bluesky"])
    jobs.run()
    [item] = items(client, key, created["id"])
    response = _publish(client, key, created["id"], item["id"], mode="draft")
    assert response.status_code == 200, response.text
    content = _post(client, key, response.json()["data"]["postId"])["content"]
    assert content.startswith("Long read: word word")
    assert content.endswith("… https://example.com/a/very/long/link/that/stays/whole")
    # Bluesky counts the link's 53 characters, X 23 for any link: Bluesky is the bound.
    assert platforms.content_length(content, "bluesky") == 300
    assert platforms.content_length(content, "twitter") <= 280


def test_an_item_of_another_feed_is_404(client, key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds)
    other = follow(client, key, feeds.serve("/other.xml", rss_feed(1)))["id"]
    assert_envelope(_publish(client, key, other, item["id"], mode="draft"), 404, "resource_not_found")
    assert_envelope(_skip(client, key, other, item["id"]), 404, "resource_not_found")


def test_items_of_the_other_mode_are_404(client, key, live_key, jobs, feeds):
    feed_id, (item, _) = _review_feed(client, key, jobs, feeds)
    assert_envelope(_publish(client, live_key, feed_id, item["id"], mode="draft"), 404, "resource_not_found")
    assert_envelope(_skip(client, live_key, feed_id, item["id"]), 404, "resource_not_found")


def test_an_auto_feed_skips_its_backlog_then_publishes_new_items_oldest_first(client, session, key, jobs, feeds,
                                                                              fake_clock):
    url = feeds.serve("/rss.xml", rss_feed(30))
    created = follow(client, key, url, mode="auto", maxItemsPerFetch=2)
    jobs.run()
    first = client.get(f"{API}/{created['id']}", headers=key.headers).json()["data"]
    assert first["itemCounts"] == {"new": 0, "published": 0, "skipped": 30}
    assert _post_count(session) == 0
    feeds.serve("/rss.xml", rss2("Example blog", list(reversed(
        [dict(title=f"Fresh {n}", link=f"https://example.com/fresh/{n}", guid=f"fresh-{n}",
              pubDate=f"Sat, {21 + n:02d} Nov 2026 10:00:00 GMT") for n in range(3)]))))
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"] == {"new": 0, "published": 2, "skipped": 30}
    published = items(client, key, created["id"], status="published")
    assert sorted(item["title"] for item in published) == ["Fresh 1", "Fresh 2"]
    posts = [_post(client, key, item["postId"]) for item in published]
    assert all(post["status"] == "scheduled" for post in posts)
    # The oldest of the two went first.
    by_title = {item["title"]: _post(client, key, item["postId"]) for item in published}
    assert by_title["Fresh 1"]["createdAt"] <= by_title["Fresh 2"]["createdAt"]
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"] == {"new": 0, "published": 3, "skipped": 30}
