"""A feed's items: listing them, and turning one into a post (or skipping it).

Publishing an item creates its post through the posts service (`add_post`: a draft,
scheduled, or due now as `POST /posts/{postId}/publish` makes it), in one
transaction with the item's new status and its link to the post, so an item is turned
into a post once: a second request, or an auto feed's fetch racing a person, finds it
handled (409). The API (acting as the key) and auto feeds (acting as `rss feed <id>`)
share this path.
"""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.rss import ItemStatus, RssFeed, RssItem
from socialpub import clock
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.posts import service as posts
from socialpub.rss import template as templates
from socialpub.rss.changes import RSS_ITEMS
from socialpub.tenancy import TenantScope

PUBLISH_MODES = ("draft", "schedule", "now")


def item_counts(session, feed_ids) -> dict:
    """{feed id: {"new": n, "published": n, "skipped": n}}, in one query."""
    counts = {feed_id: {status.value: 0 for status in ItemStatus} for feed_id in feed_ids}
    if not counts:
        return counts
    rows = session.execute(
        select(RssItem.feed_id, RssItem.status, func.count())
        .where(RssItem.feed_id.in_(list(counts)))
        .group_by(RssItem.feed_id, RssItem.status)
    )
    for feed_id, status, count in rows:
        if status in counts[feed_id]:
            counts[feed_id][status] = count
    return counts


def attach_counts(session, feeds) -> None:
    counts = item_counts(session, [feed.id for feed in feeds])
    for feed in feeds:
        feed.item_counts = counts[feed.id]


def list_items(*, session, principal, feed_id, status=None, limit=20, offset=0) -> Page:
    scope = TenantScope.of(session, principal)
    feed = scope.get(RssFeed, feed_id, resource="feed")
    criteria = [RssItem.feed_id == feed.id, *status_filter(RssItem.status, status, ItemStatus)]
    query = scope.select(RssItem, *criteria).order_by(RssItem.created_at.desc(), RssItem.published_at.desc(),
                                                      RssItem.id.desc())
    return paginate(session, query, total=scope.count_query(RssItem, *criteria), limit=limit, offset=offset)


def _handled_item(scope: TenantScope, feed_id, item_id) -> tuple[RssFeed, RssItem]:
    feed = scope.get(RssFeed, feed_id, resource="feed")
    item = scope.get(RssItem, item_id, resource="item", for_update=True)
    if item.feed_id != feed.id:
        raise ApiError.not_found("item", item_id)
    if item.status != ItemStatus.NEW:
        raise ApiError.conflict(f"The item has already been {item.status}.")
    return feed, item


def post_content(feed: RssFeed, item: RssItem) -> str:
    values = {"title": item.title, "link": item.link, "summary": item.summary, "author": item.author}
    return templates.fit(feed.template, values, feed.platforms)


def publish_item(*, session, principal, feed_id, item_id, mode, scheduled_at=None) -> RssItem:
    scope = TenantScope.of(session, principal)
    if mode not in PUBLISH_MODES:
        raise ApiError.field_invalid("mode", f"mode must be one of {', '.join(PUBLISH_MODES)}.")
    if mode == "schedule" and scheduled_at is None:
        raise ApiError.field_invalid("scheduled_at", "mode schedule needs scheduledAt.")
    if mode != "schedule" and scheduled_at is not None:
        raise ApiError.field_invalid("scheduled_at", f"scheduledAt is for mode schedule, not {mode}.")
    feed, item = _handled_item(scope, feed_id, item_id)
    publish(scope, feed, item, mode=mode, scheduled_at=scheduled_at)
    session.commit()
    return item


def publish(scope: TenantScope, feed: RssFeed, item: RssItem, *, mode: str, scheduled_at=None) -> RssItem:
    """Turns a locked `new` item into a post in the caller's transaction (the caller
    commits), or raises before changing anything when the post would be refused."""
    post = posts.add_post(
        scope, content=post_content(feed, item), platforms=list(feed.platforms),
        scheduled_at=scheduled_at if mode == "schedule" else None, publish_now=mode == "now",
    )
    item.status = ItemStatus.PUBLISHED
    item.post = post
    item.updated_at = clock.now()
    RSS_ITEMS.announce("updated", scope=scope, record=[item])
    return item


def skip_item(*, session, principal, feed_id, item_id) -> RssItem:
    scope = TenantScope.of(session, principal)
    _, item = _handled_item(scope, feed_id, item_id)
    item.status = ItemStatus.SKIPPED
    item.updated_at = clock.now()
    RSS_ITEMS.announce("updated", scope=scope, record=[item])
    session.commit()
    return item
