"""Steps the rss tests share: following a feed through the API and fetching it as
the workers do."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from persistence.events import Event
from persistence.rss import RssFeed
from tests.support.feed_server import rss2

API = "/api/v1/rss/feeds"


def entries(count: int, *, start: int = 0, day: int = 1) -> list[dict]:
    return [
        dict(title=f"Post {number}", link=f"https://example.com/posts/{number}", guid=f"post-{number}",
             description=f"<p>Body of <b>post {number}</b></p>",
             pubDate=f"Mon, {day + number % 20:02d} Nov 2026 10:00:00 GMT")
        for number in range(start, start + count)
    ]


def rss_feed(count: int = 3, **options) -> str:
    return rss2("Example blog", entries(count, **options))


def follow(client, key, url: str, **fields) -> dict:
    response = client.post(API, headers=key.headers, json={"url": url, "platforms": ["twitter"], **fields})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def fetch(client, key, jobs, feed_id: str) -> dict:
    """Asks for a fetch, runs it, and returns the feed as it then is."""
    response = client.post(f"{API}/{feed_id}/fetch", headers=key.headers)
    assert response.status_code == 202, response.text
    jobs.run()
    return feed(client, key, feed_id)


def feed(client, key, feed_id: str) -> dict:
    response = client.get(f"{API}/{feed_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def items(client, key, feed_id: str, **params) -> list[dict]:
    response = client.get(f"{API}/{feed_id}/items", headers=key.headers, params={"limit": 100, **params})
    assert response.status_code == 200, response.text
    return response.json()["data"]


def item_events(session) -> list[dict]:
    session.expire_all()
    return [event.data["item"] for event in session.execute(
        select(Event).where(Event.type == "rss.item.created").order_by(Event.created_at)
    ).scalars()]


def stored_feed(session, feed_id) -> RssFeed:
    session.expire_all()
    return session.get(RssFeed, uuid.UUID(str(feed_id)))
