"""Handlers of the `rss` tag."""
from socialpub import envelope
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_queue, current_runtime, current_session, load
from socialpub.rss import items as rss_items
from socialpub.rss import service as rss_service
from socialpub.rss.schemas import FeedCreateSchema, FeedSchema, FeedUpdateSchema, ItemPublishSchema, ItemSchema

feed_schema = FeedSchema()
item_schema = ItemSchema()
create_schema = FeedCreateSchema()
update_schema = FeedUpdateSchema()
publish_schema = ItemPublishSchema()


def list_feeds(status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = rss_service.list_feeds(
        session=current_session(), principal=current_principal(), status=status, limit=limit, offset=offset
    )
    return envelope.page(result, lambda feeds: feed_schema.dump(feeds, many=True))


def create_feed(body):
    fields = load(create_schema, body)
    feed = rss_service.create_feed(
        session=current_session(), principal=current_principal(), database=current_runtime().database,
        queue=current_queue(), settings=current_runtime().settings, **fields,
    )
    return envelope.created(feed_schema.dump(feed), location=f"{API_PREFIX}/rss/feeds/{feed.id}")


def get_feed(feed_id):
    feed = rss_service.get_feed(session=current_session(), principal=current_principal(), feed_id=feed_id)
    return envelope.ok(feed_schema.dump(feed))


def update_feed(feed_id, body):
    fields = load(update_schema, body, partial=True)
    feed = rss_service.update_feed(session=current_session(), principal=current_principal(), feed_id=feed_id, **fields)
    return envelope.ok(feed_schema.dump(feed))


def delete_feed(feed_id):
    deleted = rss_service.delete_feed(session=current_session(), principal=current_principal(), feed_id=feed_id)
    return envelope.deleted(deleted)


def pause_feed(feed_id):
    feed = rss_service.pause_feed(session=current_session(), principal=current_principal(), feed_id=feed_id)
    return envelope.ok(feed_schema.dump(feed))


def resume_feed(feed_id):
    feed = rss_service.resume_feed(session=current_session(), principal=current_principal(), feed_id=feed_id)
    return envelope.ok(feed_schema.dump(feed))


def fetch_feed(feed_id):
    feed = rss_service.fetch_now(
        session=current_session(), principal=current_principal(), database=current_runtime().database,
        queue=current_queue(), settings=current_runtime().settings, feed_id=feed_id,
    )
    return envelope.accepted(feed_schema.dump(feed), location=f"{API_PREFIX}/rss/feeds/{feed.id}")


def list_feed_items(feed_id, status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = rss_items.list_items(
        session=current_session(), principal=current_principal(), feed_id=feed_id, status=status, limit=limit,
        offset=offset,
    )
    return envelope.page(result, lambda items: item_schema.dump(items, many=True))


def publish_feed_item(feed_id, item_id, body):
    fields = load(publish_schema, body)
    item = rss_items.publish_item(
        session=current_session(), principal=current_principal(), feed_id=feed_id, item_id=item_id, **fields
    )
    return envelope.ok(item_schema.dump(item))


def skip_feed_item(feed_id, item_id):
    item = rss_items.skip_item(session=current_session(), principal=current_principal(), feed_id=feed_id, item_id=item_id)
    return envelope.ok(item_schema.dump(item))
