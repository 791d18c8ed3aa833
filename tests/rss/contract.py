"""The rss area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import select

from persistence.rss import FeedStatus, ItemStatus, RssFeed, RssItem
from tests.support.contract import RecordFactory, SuccessRequest


def make_feed(session, workspace, *, livemode: bool = False, url: str | None = None, **fields) -> RssFeed:
    values = dict(
        url=url or f"https://feeds.example.com/{uuid.uuid4()}.xml", title="Example feed", title_given=True,
        status=FeedStatus.ACTIVE, mode="review", platforms=["twitter"], template="{{title}} {{link}}",
        fetch_interval_minutes=60, max_items_per_fetch=10, consecutive_failures=0,
        # Not due: a contract test's fetch must not find it taken by a dispatcher.
        next_fetch_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1),
    )
    values.update(fields)
    feed = RssFeed(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(feed)
    session.commit()
    return feed


def make_item(session, feed: RssFeed, *, status: str = ItemStatus.NEW, **fields) -> RssItem:
    key = uuid.uuid4().hex
    values = dict(dedupe_key=key, guid=key, title="Autumn collection", link=f"https://example.com/posts/{key}",
                  summary="What is new this autumn.", author="Ana", status=status)
    values.update(fields)
    item = RssItem(workspace_id=feed.workspace_id, livemode=feed.livemode, feed_id=feed.id, **values)
    session.add(item)
    session.commit()
    return item


def _feed(session, workspace, livemode):
    return make_feed(session, workspace, livemode=livemode).id


def _find_feed(session, feed_id):
    # Still active: a refused pause, resume or fetch must not have changed it.
    return session.execute(
        select(RssFeed).where(RssFeed.id == feed_id, RssFeed.status == FeedStatus.ACTIVE)
    ).scalar_one_or_none()


def _item(session, workspace, livemode):
    return make_item(session, make_feed(session, workspace, livemode=livemode)).id


def _find_new_item(session, item_id):
    return session.execute(
        select(RssItem).where(RssItem.id == item_id, RssItem.status == ItemStatus.NEW)
    ).scalar_one_or_none()


def _new_item_of_its_feed(session, workspace):
    feed = make_feed(session, workspace)
    item = make_item(session, feed)
    return SuccessRequest(path_values={"feedId": feed.id, "itemId": item.id})


def _paused_feed(session, workspace):
    return SuccessRequest(path_values={"feedId": make_feed(session, workspace, status=FeedStatus.PAUSED).id})


RECORD_FACTORIES = {
    "feedId": RecordFactory(make=_feed, find=_find_feed),
    "itemId": RecordFactory(make=_item, find=_find_new_item),
}

SUCCESS_REQUESTS = {
    "rss.publish_feed_item": _new_item_of_its_feed,
    "rss.skip_feed_item": _new_item_of_its_feed,
    "rss.resume_feed": _paused_feed,
}
