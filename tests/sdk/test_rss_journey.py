"""RSS feeds through the generated client: follow a feed, change, pause and resume
it, ask for a fetch, turn one item into a post and skip another, remove the feed.

The server fetches feeds only from public addresses, and the journeys have no
public feed to give it: the items a fetch would have read are written to the
server's database here, as the fetch writes them."""
from __future__ import annotations

import uuid
from uuid import UUID

import pytest
from socialpub_client.api.posts import get_post
from socialpub_client.api.rss import (
    create_feed,
    delete_feed,
    fetch_feed,
    get_feed,
    list_feed_items,
    list_feeds,
    pause_feed,
    publish_feed_item,
    resume_feed,
    skip_feed_item,
    update_feed,
)
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.feed_create import FeedCreate
from socialpub_client.models.feed_item_list import FeedItemList
from socialpub_client.models.feed_item_publish import FeedItemPublish
from socialpub_client.models.feed_item_publish_mode_input import FeedItemPublishModeInput
from socialpub_client.models.feed_item_response import FeedItemResponse
from socialpub_client.models.feed_item_status_input import FeedItemStatusInput
from socialpub_client.models.feed_list import FeedList
from socialpub_client.models.feed_mode_input import FeedModeInput
from socialpub_client.models.feed_response import FeedResponse
from socialpub_client.models.feed_update import FeedUpdate
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_response import PostResponse

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def _read_items(database_url: str, feed_id: UUID, titles: list[str]) -> None:
    """Items of the feed, as a fetch records them."""
    from persistence.db import Database
    from persistence.rss import RssFeed, RssItem

    database = Database(database_url)
    try:
        with database.transaction() as session:
            feed = session.get(RssFeed, feed_id)
            for title in titles:
                key = uuid.uuid4().hex
                session.add(RssItem(
                    workspace_id=feed.workspace_id, livemode=feed.livemode, feed_id=feed.id, dedupe_key=key, guid=key,
                    title=title, link=f"https://example.com/{key}", summary=f"{title}, in short.", author="Ana",
                    status="new",
                ))
    finally:
        database.dispose()


def test_follow_a_feed_and_turn_its_items_into_posts(sdk_server: SdkServer, sdk_database_url: str) -> None:
    client = sdk_server.client()
    url = f"https://feeds.example.com/{uuid.uuid4().hex}.xml"
    body = FeedCreate(url=url, platforms=[PlatformInput.TWITTER], mode=FeedModeInput.REVIEW,
                      template="{{title}} {{link}}", fetch_interval_minutes=30)
    feed = expect(create_feed.sync_detailed(client=client, body=body), 201, FeedResponse).data
    assert (feed.url, feed.status, feed.mode, feed.fetch_interval_minutes) == (url, "active", "review", 30)
    assert feed.item_counts.to_dict() == {"new": 0, "published": 0, "skipped": 0}
    expect_error(create_feed.sync_detailed(client=client, body=body), 409, "conflict")
    expect_error(create_feed.sync_detailed(client=client, body=FeedCreate(
        url=f"{url}?again", platforms=[PlatformInput.TWITTER], template="{{title}} {{body}}",
    )), 422, "validation_error")

    listed = expect(list_feeds.sync_detailed(client=client, limit=100), 200, FeedList)
    assert feed.id in {each.id for each in listed.data}
    changed = expect(update_feed.sync_detailed(feed.id, client=client, body=FeedUpdate(title="Our blog")), 200,
                     FeedResponse).data
    assert changed.title == "Our blog"

    paused = expect(pause_feed.sync_detailed(feed.id, client=client), 200, FeedResponse).data
    assert paused.status == "paused"
    expect_error(fetch_feed.sync_detailed(feed.id, client=client), 409, "conflict")
    resumed = expect(resume_feed.sync_detailed(feed.id, client=client), 200, FeedResponse).data
    assert resumed.status == "active"
    fetching = expect(fetch_feed.sync_detailed(feed.id, client=client), 202, FeedResponse).data
    assert fetching.id == feed.id

    _read_items(sdk_database_url, feed.id, ["First", "Second"])
    items = expect(list_feed_items.sync_detailed(feed.id, client=client, status=FeedItemStatusInput.NEW), 200,
                   FeedItemList).data
    by_title = {item.title: item for item in items}
    assert set(by_title) == {"First", "Second"}

    draft = FeedItemPublish(mode=FeedItemPublishModeInput.DRAFT)
    published = expect(publish_feed_item.sync_detailed(feed.id, by_title["First"].id, client=client, body=draft), 200,
                       FeedItemResponse).data
    assert published.status == "published" and isinstance(published.post_id, UUID)
    post = expect(get_post.sync_detailed(published.post_id, client=client), 200, PostResponse).data
    assert post.content == f"First {by_title['First'].link}" and post.status == "draft"
    expect_error(publish_feed_item.sync_detailed(feed.id, by_title["First"].id, client=client, body=draft), 409,
                 "conflict")

    skipped = expect(skip_feed_item.sync_detailed(feed.id, by_title["Second"].id, client=client), 200,
                     FeedItemResponse).data
    assert skipped.status == "skipped" and skipped.post_id is None
    expect_error(skip_feed_item.sync_detailed(feed.id, by_title["Second"].id, client=client), 409, "conflict")

    counted = expect(get_feed.sync_detailed(feed.id, client=client), 200, FeedResponse).data
    assert counted.item_counts.to_dict() == {"new": 0, "published": 1, "skipped": 1}

    removed = expect(delete_feed.sync_detailed(feed.id, client=client), 200, DeletedResponse).data
    assert removed.id == feed.id and removed.deleted is True
    expect_error(get_feed.sync_detailed(feed.id, client=client), 404, "resource_not_found")
    # The post made from an item stays.
    expect(get_post.sync_detailed(published.post_id, client=client), 200, PostResponse)
