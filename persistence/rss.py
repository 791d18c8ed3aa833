"""RSS, Atom and RDF feeds a workspace follows, and the items read from them."""
from __future__ import annotations

import datetime as dt
import enum
import uuid

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from persistence.models import Base, LeasedMixin, TenantMixin
from persistence.posts import Post
from persistence.types import UtcDateTime


class FeedStatus(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    ERROR = "error"


class FeedMode(enum.StrEnum):
    REVIEW = "review"
    AUTO = "auto"


class ItemStatus(enum.StrEnum):
    NEW = "new"
    PUBLISHED = "published"
    SKIPPED = "skipped"


class RssFeed(TenantMixin, LeasedMixin, Base):
    """A feed and its fetch state. A fetch holds the feed through a lease and a token
    (socialpub.claims), so two workers never fetch one feed at once; `next_fetch_at`
    is when it is due again."""

    __tablename__ = "rss_feeds"

    url: Mapped[str] = mapped_column(String(2048), nullable=False)
    title: Mapped[str | None] = mapped_column(String(500))
    # A title the caller gave is kept; otherwise each fetch takes the feed's own.
    title_given: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=FeedStatus.ACTIVE)
    mode: Mapped[str] = mapped_column(String(20), nullable=False, default=FeedMode.REVIEW)
    platforms: Mapped[list] = mapped_column(JSON, nullable=False)
    template: Mapped[str] = mapped_column(Text, nullable=False)
    fetch_interval_minutes: Mapped[int] = mapped_column(Integer, nullable=False, default=60)
    max_items_per_fetch: Mapped[int] = mapped_column(Integer, nullable=False, default=10)
    next_fetch_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_fetched_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # When a fetch first read the feed's items: until then an auto feed publishes
    # nothing, so that following a feed never floods the accounts with its backlog.
    primed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    # Set by that first read of an auto feed: the newest date among the entries its
    # document held beyond those a fetch reads (socialpub.rss.parsing.MAX_ENTRIES).
    # Those were never recorded; an entry dated at or before it is that backlog, and
    # is recorded as skipped when a later document shows it, never published.
    backlog_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    consecutive_failures: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # The validators of the last answer, sent back as If-None-Match/If-Modified-Since.
    etag: Mapped[str | None] = mapped_column(String(500))
    last_modified: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (
        UniqueConstraint("workspace_id", "livemode", "url", name="uq_rss_feeds_tenant_url"),
        Index("ix_rss_feeds_tenant_created", "workspace_id", "livemode", "created_at", "id"),
        Index("ix_rss_feeds_due", "status", "next_fetch_at"),
    )


class RssItem(TenantMixin, Base):
    """An entry of a feed, read once. `dedupe_key` is the SHA-256 of its guid, else its
    link, else its content: a feed that re-issues an entry (a new date, a touched
    summary) adds nothing. `guid` and `link` are bounded when the entry is read
    (socialpub.rss.parsing: a guid kept to 1,000 characters, a link over 2,048 not
    kept), not by their columns."""

    __tablename__ = "rss_items"

    feed_id: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("rss_feeds.id", ondelete="CASCADE"), nullable=False)
    dedupe_key: Mapped[str] = mapped_column(String(64), nullable=False)
    guid: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str | None] = mapped_column(Text)
    link: Mapped[str | None] = mapped_column(Text)
    summary: Mapped[str | None] = mapped_column(Text)
    author: Mapped[str | None] = mapped_column(String(500))
    published_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default=ItemStatus.NEW)
    # How many fetches of an auto feed tried to make the item a post: one the post
    # rules refused stays `new` and is tried by the next fetches up to a bound
    # (socialpub.rss.fetching.AUTO_PUBLISH_TRIES), then waits for a person.
    publish_attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    post_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("posts.id", ondelete="SET NULL"))
    # Set with the new post, in its transaction: the flush inserts the post first.
    post: Mapped[Post | None] = relationship(Post, passive_deletes=True)

    __table_args__ = (
        UniqueConstraint("feed_id", "dedupe_key", name="uq_rss_items_feed_key"),
        Index("ix_rss_items_feed_status", "feed_id", "status", "created_at"),
        # A feed's items, newest first (socialpub.rss.items.list_items): their count and
        # their pages' ids read it alone.
        Index("ix_rss_items_feed_created", "workspace_id", "livemode", "feed_id", "created_at", "published_at", "id"),
    )
