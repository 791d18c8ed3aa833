"""RSS feeds: following a feed, changing, pausing and resuming it, and asking for a
fetch. Fetches run on the queue (socialpub.rss.fetching); items are in
socialpub.rss.items."""
from __future__ import annotations

import ipaddress

import httpx
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from persistence.rss import FeedMode, FeedStatus, RssFeed, RssItem
from socialpub import claims, clock
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.outbound import Allowlist, host_problem, is_public
from socialpub.posts.rules import check_platforms
from socialpub.rss import fetching
from socialpub.rss import items as rss_items
from socialpub.rss import template as templates
from socialpub.rss.changes import RSS_ITEMS
from socialpub.rss.jobs import fetch_feed
from socialpub.tenancy import TenantScope, scoped

MODES = tuple(FeedMode)
MAX_URL_CHARS = 2048
MAX_TITLE_CHARS = 500
INTERVAL_RANGE = (15, 1440)
ITEMS_RANGE = (1, 50)
UNSET = object()


def check_url(url: str) -> str:
    """A URL a fetch could reach, judged without looking its name up (that happens,
    with every redirect, when the feed is fetched): http(s), a usable host, and no
    private address written out literally."""
    url = (url or "").strip()
    if not url:
        raise ApiError.field_invalid("url", "url must not be blank.")
    if len(url) > MAX_URL_CHARS:
        raise ApiError.field_invalid("url", f"url may be at most {MAX_URL_CHARS} characters.")
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - any unparsable URL
        raise ApiError.field_invalid("url", "url is not a valid URL.") from None
    if parsed.scheme not in ("http", "https"):
        raise ApiError.field_invalid("url", "url must be an http or https URL.")
    if not parsed.host:
        raise ApiError.field_invalid("url", "url has no host.")
    problem = host_problem(parsed)
    if problem:
        raise ApiError.field_invalid("url", f"url's host cannot be used: {problem}.")
    try:
        literal = ipaddress.ip_address(parsed.host)
    except ValueError:
        literal = None
    allowlist = Allowlist.from_env()
    if literal is not None and not (is_public(literal) or allowlist.allows_address(literal)
                                    or allowlist.allows_host(parsed.host)):
        raise ApiError.field_invalid("url", f"url points at {literal}, a non-public address.")
    return url


def _check_range(name: str, value: int, bounds: tuple[int, int], unit: str) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError.field_invalid(name, f"{name} must be between {low} and {high} {unit}.")
    return value


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ApiError.field_invalid("mode", f"mode must be one of {', '.join(MODES)}.")
    return mode


def _check_title(title):
    if title is None:
        return None
    title = title.strip()
    if not title:
        raise ApiError.field_invalid("title", "title must not be blank; send null to take the feed's own.")
    if len(title) > MAX_TITLE_CHARS:
        raise ApiError.field_invalid("title", f"title may be at most {MAX_TITLE_CHARS} characters.")
    return title


def _duplicate(url: str) -> ApiError:
    return ApiError.conflict(f"This workspace already follows {url} in this mode.")


def _commit_unique(session, url: str) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise _duplicate(url) from None


def create_feed(*, session, principal, database, queue, settings, url, platforms, title=None, mode="review", template=None,
                fetch_interval_minutes=60, max_items_per_fetch=10) -> RssFeed:
    scope = TenantScope.of(session, principal)
    url = check_url(url)
    feed = RssFeed(
        url=url, title=_check_title(title), title_given=title is not None, status=FeedStatus.ACTIVE,
        mode=_check_mode(mode), platforms=check_platforms(platforms), template=templates.check_template(template),
        fetch_interval_minutes=_check_range("fetch_interval_minutes", fetch_interval_minutes, INTERVAL_RANGE, "minutes"),
        max_items_per_fetch=_check_range("max_items_per_fetch", max_items_per_fetch, ITEMS_RANGE, "items"),
        next_fetch_at=clock.now(), consecutive_failures=0,
    )
    if scope.count(RssFeed, RssFeed.url == url):
        raise _duplicate(url)
    scope.add(feed)
    _commit_unique(session, url)
    feed.item_counts = rss_items.item_counts(session, [feed.id])[feed.id]
    request_fetch(session, database, queue, settings, feed)
    return feed


@scoped
def list_feeds(scope: TenantScope, *, status=None, limit=20, offset=0) -> Page:
    session = scope.session
    criteria = status_filter(RssFeed.status, status, FeedStatus)
    query = scope.select(RssFeed, *criteria).order_by(RssFeed.created_at.desc(), RssFeed.id.desc())
    page = paginate(session, query, total=scope.count_query(RssFeed, *criteria), limit=limit, offset=offset)
    rss_items.attach_counts(session, page.items)
    return page


@scoped
def get_feed(scope: TenantScope, *, feed_id) -> RssFeed:
    session = scope.session
    feed = scope.get(RssFeed, feed_id, resource="feed")
    rss_items.attach_counts(session, [feed])
    return feed


def update_feed(*, session, principal, feed_id, url=UNSET, title=UNSET, mode=UNSET, platforms=UNSET, template=UNSET,
                fetch_interval_minutes=UNSET, max_items_per_fetch=UNSET) -> RssFeed:
    scope = TenantScope.of(session, principal)
    feed = scope.get(RssFeed, feed_id, resource="feed", for_update=True)
    if url is not UNSET:
        url = check_url(url)
        if url != feed.url:
            if scope.count(RssFeed, RssFeed.url == url, RssFeed.id != feed.id):
                raise _duplicate(url)
            # Another document: its validators and what it had are not this one's.
            feed.url, feed.etag, feed.last_modified, feed.primed_at = url, None, None, None
            feed.next_fetch_at = clock.now()
    if title is not UNSET:
        feed.title, feed.title_given = _check_title(title), title is not None
    if mode is not UNSET and _check_mode(mode) != feed.mode:
        if mode == FeedMode.AUTO:
            # Entries already in the feed are not published by switching to auto:
            # the next fetch records them as skipped, as a new auto feed's first does.
            feed.primed_at = None
        feed.mode = mode
    if platforms is not UNSET:
        feed.platforms = check_platforms(platforms)
    if template is not UNSET:
        if template is None:
            raise ApiError.field_invalid("template", "template must not be null.")
        feed.template = templates.check_template(template)
    if fetch_interval_minutes is not UNSET:
        feed.fetch_interval_minutes = _check_range("fetch_interval_minutes", fetch_interval_minutes, INTERVAL_RANGE,
                                                   "minutes")
    if max_items_per_fetch is not UNSET:
        feed.max_items_per_fetch = _check_range("max_items_per_fetch", max_items_per_fetch, ITEMS_RANGE, "items")
    feed.updated_at = clock.now()
    _commit_unique(session, feed.url)
    rss_items.attach_counts(session, [feed])
    return feed


def delete_feed(*, session, principal, feed_id) -> str:
    scope = TenantScope.of(session, principal)
    feed = scope.get(RssFeed, feed_id, resource="feed", for_update=True)
    identifier = str(feed.id)
    item_ids = list(session.execute(
        select(RssItem.id).where(*scope.criteria(RssItem), RssItem.feed_id == feed.id)
    ).scalars())
    if item_ids:
        RSS_ITEMS.announce("deleted", scope=scope, record=item_ids)
    session.delete(feed)
    session.commit()
    return identifier


@scoped
def pause_feed(scope: TenantScope, *, feed_id) -> RssFeed:
    session = scope.session
    feed = scope.get(RssFeed, feed_id, resource="feed", for_update=True)
    if feed.status == FeedStatus.PAUSED:
        raise ApiError.conflict("The feed is already paused.")
    feed.status = FeedStatus.PAUSED
    feed.updated_at = clock.now()
    session.commit()
    rss_items.attach_counts(session, [feed])
    return feed


@scoped
def resume_feed(scope: TenantScope, *, feed_id) -> RssFeed:
    """A paused feed, or one stopped by failures, is active again and due at once;
    its failure count starts over."""
    session = scope.session
    feed = scope.get(RssFeed, feed_id, resource="feed", for_update=True)
    if feed.status == FeedStatus.ACTIVE:
        raise ApiError.conflict("The feed is already active.")
    feed.status = FeedStatus.ACTIVE
    feed.consecutive_failures = 0
    feed.last_error = None
    feed.next_fetch_at = feed.updated_at = clock.now()
    session.commit()
    rss_items.attach_counts(session, [feed])
    return feed


@scoped
def fetch_now(scope: TenantScope, *, database, queue, settings, feed_id) -> RssFeed:
    """Hands the feed to a fetch job and answers at once. A fetch already under way
    is that fetch: nothing more is queued."""
    session = scope.session
    feed = scope.get(RssFeed, feed_id, resource="feed")
    if feed.status == FeedStatus.PAUSED:
        raise ApiError.conflict("The feed is paused; resume it to fetch it.")
    request_fetch(session, database, queue, settings, feed)
    rss_items.attach_counts(session, [feed])
    return feed


def request_fetch(session, database, queue, settings, feed: RssFeed) -> bool:
    """Claims the feed for a fetch now and hands it to the queue, as the dispatcher
    does; a queue that refuses it gives the claim back, and the feed stays due."""
    token = fetching.claim_feed(session, feed.id, now=clock.now(), settings=settings)
    session.commit()
    if token is None:
        return False
    return claims.hand_out(
        database=database, queue=queue, run=fetch_feed, model=RssFeed, claimed=[feed.id], token=token,
        job_name="rss-feed",
    ) == 1
