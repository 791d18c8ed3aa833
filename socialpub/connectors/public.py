"""The platforms' public readers, one per platform, read without an account
(cross-cutting, as the connectors are): what competitor tracking reads of a profile
(socialpub.connectors.profiles) and what social listening searches
(socialpub.connectors.search).

- Mastodon (MastodonPublic):
  - a profile: the instance's `GET /api/v1/accounts/lookup?acct=` (the account, with
    `followers_count`), then `GET /api/v1/accounts/{id}/statuses` (`limit` up to 40,
    `exclude_reblogs`, paged back with `max_id`), newest first;
  - a search: the instance's hashtag timeline `/api/v1/timelines/tag/{hashtag}`. The
    cursor is the newest status id seen; `min_id` reads the page right after it, and
    the next pages after that page's newest (as its `Link: rel="prev"` does), so a
    burst larger than a page is read over the pages and polls, never skipped.
- Bluesky (BlueskyPublic):
  - a profile: the public AppView's `app.bsky.actor.getProfile` (`followersCount`) and
    `app.bsky.feed.getAuthorFeed` (`filter=posts_no_replies`, `limit` up to 100, paged
    back with `cursor`); reposts (items with a `reason`) are left out;
  - a search: the AppView's `app.bsky.feed.searchPosts` (`q`, `sort=latest`, `limit`,
    paged back with `cursor`). The cursor kept between searches is the `indexedAt` of
    the newest post seen.

A profile reading pages back from the newest post until it meets the cursor it was
given (the newest post the previous reading saw: a Mastodon status id, a Bluesky
`indexedAt`), at most PAGES pages; a first reading reads the newest page only. Posts
of the pages read are all given, so the counts of the recent ones are read again each
time. A Bluesky search pages back the same way (at most SEARCH_PAGES pages).

Every request goes through the guarded outbound client (socialpub.outbound) with the
connectors' error mapping (`_common`): failures are PlatformError, a rate limit
carrying the platform's wait.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import httpx

from socialpub.connectors import _common as c
from socialpub.connectors.base import PlatformError
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.outbound import GuardedClient, Response

PAGES = 5
_HASHTAG = re.compile(r"(?<![\w&])#(\w{1,100})")


@dataclass(frozen=True)
class PublicPost:
    """A public post of a profile, as the platform gives it."""

    external_id: str  # the platform's lasting id (a Bluesky at:// URI, a Mastodon status's URI)
    text: str
    url: str | None
    posted_at: dt.datetime
    likes: int
    replies: int
    reposts: int
    hashtags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProfileReading:
    """A profile's followers (None: not given), its posts read (newest first) and the
    cursor to read from next (None: keep the one given)."""

    followers: int | None
    posts: list[PublicPost] = field(default_factory=list)
    cursor: str | None = None


@dataclass(frozen=True)
class FoundPost:
    """A public post a platform's search found, as the platform gives it."""

    # The platform's lasting id of the post (a Bluesky at:// URI, a Mastodon status's URI).
    external_id: str
    author: str | None  # the author's handle, as people write it (@ana.bsky.social)
    text: str
    url: str | None
    language: str | None  # the platform's language tag (`en`, `pt-BR`); None when it names none
    posted_at: dt.datetime | None


@dataclass(frozen=True)
class SearchPage:
    """The posts a search found after a cursor, and the cursor to search from next
    (None: keep the one given)."""

    posts: list[FoundPost]
    cursor: str | None


def hashtags_of(text: str, given=()) -> tuple[str, ...]:
    """The hashtags of a post, lower-cased, each once, in order: those the platform
    names and those written in the text."""
    seen: list[str] = []
    for tag in [*given, *_HASHTAG.findall(text or "")]:
        tag = tag.lstrip("#").casefold()[:100] if isinstance(tag, str) else ""
        if tag and tag not in seen:
            seen.append(tag)
    return tuple(seen)


def _when(value) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _order(status_id: str) -> tuple[int, str]:
    # Mastodon ids are decimal snowflakes as strings: longer is newer.
    return len(status_id), status_id


def _service(base_url: str, platform: str, what: str) -> str:
    try:
        return c.base_url(base_url, f"{platform}'s {what}")
    except ValueError as exc:
        raise PlatformError(c.DESTINATION_REFUSED, f"{platform}: {exc}", transient=False) from None


def _error(platform: str, response: Response, what: str, *, named: bool) -> PlatformError:
    """An error answer as PlatformError; `named`: `what` names a profile, and an
    answer saying it does not exist says so."""
    body = c.json_or_none(response)
    parts = [body.get(name) for name in ("error", "message")] if isinstance(body, dict) else []
    text = ": ".join(c.detail(part, c.Redactor()) for part in parts if isinstance(part, str) and part)
    status = response.status_code
    if isinstance(body, dict) and body.get("error") == "RateLimitExceeded":
        status = 429
    if named and (status == 404 or (status == 400 and isinstance(body, dict)
                                    and body.get("error") in ("InvalidRequest", "AccountNotFound"))):
        return PlatformError(c.REJECTED, f"{platform}: {what} was not found" + (f" ({text})" if text else "") + ".",
                             transient=False)
    wait = c.seconds_until_epoch(response.headers.get("ratelimit-reset")) or c.seconds_until_iso(
        response.headers.get("X-RateLimit-Reset"))
    return c.error_for_status(platform, response, text, status=status, platform_wait=wait, refused=what)


class _PublicReader(c.HttpConnector):
    """The one way a public reader asks its platform: a GET through the guarded
    client, an error answer mapped to PlatformError."""

    PLATFORM = ""

    def _get(self, url: str, what: str, *, named: bool = False) -> Response:
        response = c.send(self.client, "GET", url, platform=self.PLATFORM, redact=c.Redactor(),
                          headers={"Accept": "application/json"})
        if not 200 <= response.status_code < 300:
            raise _error(self.PLATFORM, response, what, named=named)
        return response

    def _list(self, url: str, what: str, expected: str, *, named: bool = False) -> list:
        response = self._get(url, what, named=named)
        body = c.json_or_none(response)
        if not isinstance(body, list):
            raise c.malformed(self.PLATFORM, expected, response, url)
        return body


class MastodonPublic(_PublicReader):
    """Mastodon's public profiles and hashtag timelines. A profile is read on
    `instance_url` (an instance that knows the account; its own, https://<its
    domain>, when None); a search on the instance it is given."""

    name = "mastodon"
    PLATFORM = "Mastodon"
    PAGE = 40
    TAG_PAGE = 40
    TAG_PAGES = 5
    MAX_ID_CHARS = 255

    def __init__(self, client: GuardedClient | None = None, *, instance_url: str | None = None):
        super().__init__(client)
        self.instance_url = instance_url

    @c.platform_errors_only
    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        acct = handle.strip().lstrip("@")
        user, _, domain = acct.partition("@")
        if not user or not domain:
            raise PlatformError(c.REJECTED, f"{self.PLATFORM}: {handle} does not name its instance (user@instance).",
                                transient=False)
        instance = _service(self.instance_url or f"https://{domain}", self.PLATFORM, "URL")
        url = f"{instance}/api/v1/accounts/lookup?{urlencode({'acct': acct})}"
        response = self._get(url, f"the account {handle}", named=True)
        account = c.reply_object(response, self.PLATFORM, url)
        account_id = str(account.get("id") or "")
        if not account_id.isdigit():
            raise c.malformed(self.PLATFORM, "an account with an id", response, url)
        posts: list[PublicPost] = []
        newest, max_id = cursor, None
        for _ in range(PAGES if cursor else 1):
            query = {"limit": self.PAGE, "exclude_reblogs": "true", **({"max_id": max_id} if max_id else {})}
            url = f"{instance}/api/v1/accounts/{account_id}/statuses?{urlencode(query)}"
            statuses = self._list(url, f"the statuses of {handle}", "a list of statuses", named=True)
            reached, oldest = False, None
            for status in statuses:
                status_id = str(status.get("id") or "") if isinstance(status, dict) else ""
                if not status_id.isdigit():
                    continue
                oldest = status_id if oldest is None or _order(status_id) < _order(oldest) else oldest
                if newest is None or _order(status_id) > _order(newest):
                    newest = status_id
                if cursor and _order(status_id) <= _order(cursor):
                    reached = True
                parsed = self._profile_post(status, domain)
                if parsed is not None:
                    posts.append(parsed)
            if reached or oldest is None or len(statuses) < self.PAGE:
                break
            max_id = oldest
        return ProfileReading(followers=_count(account.get("followers_count")), posts=posts, cursor=newest)

    @c.platform_errors_only
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        instance = _service(base_url, self.PLATFORM, "search URL")
        host = httpx.URL(instance).host
        tag = quote(term.lstrip("#"), safe="")
        found: list[FoundPost] = []
        newest, after = cursor, cursor
        for _ in range(self.TAG_PAGES if cursor else 1):
            query = f"limit={self.TAG_PAGE}" + (f"&min_id={quote(after, safe='')}" if after else "")
            url = f"{instance}/api/v1/timelines/tag/{tag}?{query}"
            statuses = self._list(url, "the hashtag timeline", "a list of statuses")
            page_newest = None
            for status in statuses:
                status_id = str(status.get("id") or "") if isinstance(status, dict) else ""
                if not status_id.isdigit():
                    continue
                if page_newest is None or _order(status_id) > _order(page_newest):
                    page_newest = status_id
                parsed = self._found_post(status, host)
                if parsed is not None:
                    found.append(parsed)
            if page_newest is not None and (newest is None or _order(page_newest) > _order(newest)):
                newest = page_newest
            if page_newest is None or len(statuses) < self.TAG_PAGE:
                break
            after = page_newest
        return SearchPage(posts=found, cursor=newest)

    @classmethod
    def _identity(cls, status: dict, host: str) -> str:
        """A status's lasting id: its URI (else its URL, else one made on its
        instance), a digest of it when too long to keep."""
        identity = _text(status.get("uri")) or _text(status.get("url")) or f"https://{host}/statuses/{status['id']}"
        if len(identity) > cls.MAX_ID_CHARS:
            identity = "sha256:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()
        return identity

    @classmethod
    def _profile_post(cls, status: dict, host: str) -> PublicPost | None:
        if status.get("reblog") or status.get("visibility") not in (None, "public", "unlisted"):
            return None
        posted_at = _when(status.get("created_at"))
        if posted_at is None:
            return None
        text = MastodonConnector._plain_text(status.get("content"))
        tags = [tag.get("name") for tag in status.get("tags") or () if isinstance(tag, dict)]
        return PublicPost(
            external_id=cls._identity(status, host), text=text,
            url=status.get("url") if isinstance(status.get("url"), str) else None,
            posted_at=posted_at, likes=_count(status.get("favourites_count")), replies=_count(status.get("replies_count")),
            reposts=_count(status.get("reblogs_count")), hashtags=hashtags_of(text, tags),
        )

    @classmethod
    def _found_post(cls, status: dict, host: str) -> FoundPost | None:
        if status.get("reblog") or status.get("visibility") not in (None, "public"):
            return None
        account = status.get("account") if isinstance(status.get("account"), dict) else {}
        acct = _text(account.get("acct")) or _text(account.get("username"))
        if acct and "@" not in acct:
            acct = f"{acct}@{host}"  # a local account is named without its instance
        text = MastodonConnector._plain_text(status.get("content"))
        warning = _text(status.get("spoiler_text"))
        return FoundPost(
            external_id=cls._identity(status, host), author=f"@{acct}" if acct else None,
            text=f"{warning}\n\n{text}" if warning else text, url=_text(status.get("url")),
            language=_text(status.get("language")), posted_at=_when(status.get("created_at")),
        )


class BlueskyPublic(_PublicReader):
    """Bluesky's public profiles, read on the public AppView at `appview_url`, and its
    post search, read on the AppView it is given."""

    name = "bluesky"
    PLATFORM = "Bluesky"
    PAGE = 50
    SEARCH_PAGE = 100
    SEARCH_PAGES = 5

    def __init__(self, client: GuardedClient | None = None, *, appview_url: str = "https://public.api.bsky.app"):
        super().__init__(client)
        self.appview_url = appview_url

    @c.platform_errors_only
    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        actor = handle.strip().lstrip("@")
        service = _service(self.appview_url, self.PLATFORM, "URL")
        url = f"{service}/xrpc/app.bsky.actor.getProfile?{urlencode({'actor': actor})}"
        profile = c.reply_object(self._get(url, f"the profile {handle}", named=True), self.PLATFORM, url)
        posts: list[PublicPost] = []
        newest = cursor
        params = {"actor": actor, "limit": self.PAGE, "filter": "posts_no_replies"}
        for feed in self._pages(service, "app.bsky.feed.getAuthorFeed", params, listed="feed", expected="a feed",
                                what=f"the posts of {handle}", named=True, pages=PAGES if cursor else 1):
            reached = False
            for item in feed:
                post = item.get("post") if isinstance(item, dict) and not item.get("reason") else None
                indexed = post.get("indexedAt") if isinstance(post, dict) else None
                if not isinstance(indexed, str):
                    continue
                if cursor and indexed <= cursor:
                    reached = True
                newest = indexed if newest is None or indexed > newest else newest
                parsed = self._profile_post(post, actor)
                if parsed is not None:
                    posts.append(parsed)
            if reached:
                break
        return ProfileReading(followers=_count(profile.get("followersCount")), posts=posts, cursor=newest)

    @c.platform_errors_only
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        service = _service(base_url, self.PLATFORM, "search URL")
        found: list[FoundPost] = []
        newest = cursor
        params = {"q": term, "sort": "latest", "limit": self.SEARCH_PAGE}
        for posts in self._pages(service, "app.bsky.feed.searchPosts", params, listed="posts", expected="a list of posts",
                                 what="the search", named=False, pages=self.SEARCH_PAGES if cursor else 1):
            reached = False
            for post in posts:
                indexed = post.get("indexedAt") if isinstance(post, dict) else None
                if not isinstance(indexed, str):
                    continue
                if cursor and indexed <= cursor:
                    reached = True
                    continue
                parsed = self._found_post(post)
                if parsed is not None:
                    newest = indexed if newest is None or indexed > newest else newest
                    found.append(parsed)
            if reached:
                break
        return SearchPage(posts=found, cursor=newest)

    def _pages(self, service: str, method: str, params: dict, *, listed: str, expected: str, what: str, named: bool,
               pages: int):
        """The lists `listed` of `method`'s pages, newest first, paged back with
        `cursor`: at most `pages`, until a page without a next cursor or items (the
        caller stops sooner once it meets its own cursor)."""
        page_cursor = None
        for _ in range(pages):
            query = {**params, "cursor": page_cursor} if page_cursor else params
            url = f"{service}/xrpc/{method}?{urlencode(query)}"
            response = self._get(url, what, named=named)
            body = c.reply_object(response, self.PLATFORM, url)
            items = body.get(listed)
            if not isinstance(items, list):
                raise c.malformed(self.PLATFORM, expected, response, url)
            yield items
            page_cursor = body.get("cursor") if isinstance(body.get("cursor"), str) else None
            if not page_cursor or not items:
                return

    @staticmethod
    def _profile_post(post: dict, actor: str) -> PublicPost | None:
        uri, record = post.get("uri"), post.get("record")
        if not isinstance(uri, str) or not uri or len(uri) > 255 or not isinstance(record, dict):
            return None
        posted_at = _when(record.get("createdAt")) or _when(post.get("indexedAt"))
        if posted_at is None:
            return None
        text = record.get("text") if isinstance(record.get("text"), str) else ""
        tags = [feature.get("tag") for facet in record.get("facets") or () if isinstance(facet, dict)
                for feature in facet.get("features") or () if isinstance(feature, dict)
                and feature.get("$type") == "app.bsky.richtext.facet#tag"]
        author = post.get("author") if isinstance(post.get("author"), dict) else {}
        shown = author.get("handle") if isinstance(author.get("handle"), str) else actor
        return PublicPost(
            external_id=uri, text=text, url=f"https://bsky.app/profile/{shown}/post/{uri.rsplit('/', 1)[-1]}",
            posted_at=posted_at, likes=_count(post.get("likeCount")), replies=_count(post.get("replyCount")),
            reposts=_count(post.get("repostCount")) + _count(post.get("quoteCount")), hashtags=hashtags_of(text, tags),
        )

    @staticmethod
    def _found_post(post: dict) -> FoundPost | None:
        uri, author, record = post.get("uri"), post.get("author"), post.get("record")
        if not isinstance(uri, str) or not uri or not isinstance(record, dict):
            return None
        handle = author.get("handle") if isinstance(author, dict) else None
        langs = record.get("langs")
        rkey = uri.rsplit("/", 1)[-1]
        return FoundPost(
            external_id=uri, author=f"@{handle}" if _text(handle) else None,
            text=record.get("text") if isinstance(record.get("text"), str) else "",
            url=f"https://bsky.app/profile/{handle}/post/{rkey}" if _text(handle) and rkey else None,
            language=langs[0] if isinstance(langs, list) and langs and isinstance(langs[0], str) else None,
            posted_at=_when(record.get("createdAt")) or _when(post.get("indexedAt")),
        )
