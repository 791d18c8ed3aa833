"""A feed's items: listing them, and turning one into a post (or skipping it).

Publishing an item creates its post through the posts service, and for `now` hands
it to publishing as `POST /posts/{postId}/publish` does. The item's status flips to
`published` in the transaction that creates the post, so an item is turned into a
post once: a second request, or an auto feed's fetch racing a person, finds it
handled (409). The API and auto feeds share this path.
"""
from __future__ import annotations

from contextlib import contextmanager

from sqlalchemy import event, func, select

from persistence.posts import Post
from persistence.rss import ItemStatus, RssFeed, RssItem
from socialpub import clock
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.posts import service as posts
from socialpub.posts.rules import check_publishable
from socialpub.principal import Principal
from socialpub.publishing import service as publishing
from socialpub.rss import template as templates
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
    return publish(scope, principal, feed, item, mode=mode, scheduled_at=scheduled_at)


def publish(scope: TenantScope, principal, feed: RssFeed, item: RssItem, *, mode: str, scheduled_at=None) -> RssItem:
    """Turns a locked `new` item into a post; commits. Raises before writing anything
    when the post would be refused."""
    session = scope.session
    content = post_content(feed, item)
    platforms = list(feed.platforms)
    if mode == "now":
        check_publishable(scope, content, platforms)
    item.status = ItemStatus.PUBLISHED
    item.updated_at = clock.now()
    # create_post commits: the post, the item's new status and its link to the post
    # are one transaction.
    with _linked_when_flushed(session, item):
        post = posts.create_post(session=session, principal=principal, content=content, platforms=platforms,
                                 scheduled_at=scheduled_at if mode == "schedule" else None)
    if mode == "now":
        # Checked above; an account disconnected in between leaves the item with its
        # draft, which can be published from the posts.
        publishing.publish_now(session=session, principal=principal, post_id=post.id)
    return item


@contextmanager
def _linked_when_flushed(session, item: RssItem):
    """Links `item` to the post the block adds, in the flush that inserts it."""

    def link(flushing, _context, _instances):
        created = [record for record in flushing.new if isinstance(record, Post)]
        if created:
            item.post = created[0]

    event.listen(session, "before_flush", link)
    try:
        yield
    finally:
        event.remove(session, "before_flush", link)


def skip_item(*, session, principal, feed_id, item_id) -> RssItem:
    scope = TenantScope.of(session, principal)
    _, item = _handled_item(scope, feed_id, item_id)
    item.status = ItemStatus.SKIPPED
    item.updated_at = clock.now()
    session.commit()
    return item


def feed_principal(feed: RssFeed) -> Principal:
    """Who an auto feed publishes as: its own workspace and mode, and nothing more."""
    return Principal(api_key_id=None, workspace_id=feed.workspace_id, livemode=feed.livemode,
                     scopes=frozenset({"posts:publish"}), plan="", per_minute=None, per_day=None, valid_until=None)
