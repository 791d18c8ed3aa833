"""The platforms' public search, read without an account (cross-cutting, as the
connectors are): what social listening polls.

- Bluesky: the AppView's `app.bsky.feed.searchPosts` (`q`, `sort=latest`, `limit`,
  paged back with `cursor`). The cursor kept between searches is the `indexedAt` of
  the newest post seen: a search pages back until it meets it (at most
  SEARCH_PAGES pages); a first search reads the newest page only.
- Mastodon: an instance's hashtag timeline `/api/v1/timelines/tag/{hashtag}`. The
  cursor is the newest status id seen; `min_id` reads the page right after it, and
  the next pages after that page's newest (as its `Link: rel="prev"` does), so a
  burst larger than a page is read over the pages and polls, never skipped.
- The sandbox (test mode): a deterministic stream per platform and term, no network:
  a post every few minutes (5 to 29, drawn from the term) since 2024-01-01, each
  drawn from its number (its author, and a positive, negative or neutral sentence
  holding the term, as a hashtag on Mastodon); the cursor is the number of the last
  post read. A first search reads the newest FIRST_SANDBOX_POSTS; each search reads
  at most SANDBOX_PAGE posts after the cursor, oldest first.

Every request goes through the guarded outbound client (socialpub.outbound) with
the connectors' error mapping (`_common`): failures are PlatformError, a rate limit
carrying the platform's wait.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote, urlencode

import httpx

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors.base import PlatformError
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.sandbox import _Draws
from socialpub.outbound import GuardedClient, Response


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


class PublicSearch(Protocol):
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        """The public posts of `term` (a Bluesky query, a Mastodon hashtag) newer than
        `cursor`, from the service at `base_url`; without a cursor, the newest page
        only (a first search reads no backlog beyond it). PlatformError on failure."""


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


def _get(client: GuardedClient, url: str, platform: str) -> Response:
    return c.send(client, "GET", url, platform=platform, redact=c.Redactor(), headers={"Accept": "application/json"})


def _service(base_url: str, platform: str) -> str:
    try:
        return c.base_url(base_url, f"{platform}'s search URL")
    except ValueError as exc:
        raise PlatformError(c.DESTINATION_REFUSED, f"{platform}: {exc}", transient=False) from None


def _error(platform: str, response: Response, what: str) -> PlatformError:
    body = c.json_or_none(response)
    parts = [body.get(name) for name in ("error", "message")] if isinstance(body, dict) else []
    text = ": ".join(c.detail(part, c.Redactor()) for part in parts if isinstance(part, str) and part)
    status = response.status_code
    if isinstance(body, dict) and body.get("error") == "RateLimitExceeded":
        status = 429
    wait = c.seconds_until_epoch(response.headers.get("ratelimit-reset")) or c.seconds_until_iso(
        response.headers.get("X-RateLimit-Reset"))
    return c.error_for_status(platform, response, text, status=status, platform_wait=wait, refused=what)


class BlueskySearch(c.HttpConnector):
    name = "bluesky"
    PLATFORM = "Bluesky"
    SEARCH_PAGE = 100
    SEARCH_PAGES = 5

    @c.platform_errors_only
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        service = _service(base_url, self.PLATFORM)
        found: list[FoundPost] = []
        newest, page_cursor = cursor, None
        for _ in range(self.SEARCH_PAGES if cursor else 1):
            params = {"q": term, "sort": "latest", "limit": self.SEARCH_PAGE}
            if page_cursor:
                params["cursor"] = page_cursor
            url = f"{service}/xrpc/app.bsky.feed.searchPosts?{urlencode(params)}"
            response = _get(self.client, url, self.PLATFORM)
            if not 200 <= response.status_code < 300:
                raise _error(self.PLATFORM, response, "the search")
            body = c.reply_object(response, self.PLATFORM, url)
            posts = body.get("posts")
            if not isinstance(posts, list):
                raise c.malformed(self.PLATFORM, "a list of posts", response, url)
            reached = False
            for post in posts:
                indexed = post.get("indexedAt") if isinstance(post, dict) else None
                if not isinstance(indexed, str):
                    continue
                if cursor and indexed <= cursor:
                    reached = True
                    continue
                parsed = self._post(post)
                if parsed is not None:
                    newest = indexed if newest is None or indexed > newest else newest
                    found.append(parsed)
            page_cursor = body.get("cursor") if isinstance(body.get("cursor"), str) else None
            if reached or not page_cursor or not posts:
                break
        return SearchPage(posts=found, cursor=newest)

    @staticmethod
    def _post(post: dict) -> FoundPost | None:
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


class MastodonSearch(c.HttpConnector):
    name = "mastodon"
    PLATFORM = "Mastodon"
    TAG_PAGE = 40
    TAG_PAGES = 5
    MAX_ID_CHARS = 255

    @c.platform_errors_only
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        instance = _service(base_url, self.PLATFORM)
        host = httpx.URL(instance).host
        tag = quote(term.lstrip("#"), safe="")
        found: list[FoundPost] = []
        newest, after = cursor, cursor
        for _ in range(self.TAG_PAGES if cursor else 1):
            query = f"limit={self.TAG_PAGE}" + (f"&min_id={quote(after, safe='')}" if after else "")
            url = f"{instance}/api/v1/timelines/tag/{tag}?{query}"
            response = _get(self.client, url, self.PLATFORM)
            if not 200 <= response.status_code < 300:
                raise _error(self.PLATFORM, response, "the hashtag timeline")
            statuses = c.json_or_none(response)
            if not isinstance(statuses, list):
                raise c.malformed(self.PLATFORM, "a list of statuses", response, url)
            page_newest = None
            for status in statuses:
                status_id = str(status.get("id") or "") if isinstance(status, dict) else ""
                if not status_id.isdigit():
                    continue
                if page_newest is None or _order(status_id) > _order(page_newest):
                    page_newest = status_id
                parsed = self._status(status, host)
                if parsed is not None:
                    found.append(parsed)
            if page_newest is not None and (newest is None or _order(page_newest) > _order(newest)):
                newest = page_newest
            if page_newest is None or len(statuses) < self.TAG_PAGE:
                break
            after = page_newest
        return SearchPage(posts=found, cursor=newest)

    @classmethod
    def _status(cls, status: dict, host: str) -> FoundPost | None:
        if status.get("reblog") or status.get("visibility") not in (None, "public"):
            return None
        account = status.get("account") if isinstance(status.get("account"), dict) else {}
        acct = _text(account.get("acct")) or _text(account.get("username"))
        if acct and "@" not in acct:
            acct = f"{acct}@{host}"  # a local account is named without its instance
        identity = _text(status.get("uri")) or _text(status.get("url")) or f"https://{host}/statuses/{status['id']}"
        if len(identity) > cls.MAX_ID_CHARS:
            identity = "sha256:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()
        text = MastodonConnector._plain_text(status.get("content"))
        warning = _text(status.get("spoiler_text"))
        return FoundPost(
            external_id=identity, author=f"@{acct}" if acct else None, text=f"{warning}\n\n{text}" if warning else text,
            url=_text(status.get("url")), language=_text(status.get("language")), posted_at=_when(status.get("created_at")),
        )


def _order(status_id: str) -> tuple[int, str]:
    # Mastodon ids are decimal snowflakes as strings: longer is newer.
    return len(status_id), status_id


class SandboxSearch:
    """The deterministic stream test mode reads (the module's docstring)."""

    name = "sandbox"
    EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    FIRST_SANDBOX_POSTS = 5
    SANDBOX_PAGE = 100
    AUTHORS = ("@sam@sandbox.socialpub.dev", "@ana@sandbox.socialpub.dev", "@lee@sandbox.socialpub.dev",
               "@kim@sandbox.socialpub.dev", "@noor@sandbox.socialpub.dev")
    SENTENCES = {
        "positive": ("I love {term}! Best thing I bought this year.", "{term} is great, thank you for the fast help!",
                     "Really happy with {term} today :)"),
        "negative": ("{term} support is awful. I hate waiting for days.", "Very disappointed with {term}, it broke again.",
                     "{term} is the worst, never again!"),
        "neutral": ("Reading about {term} this morning.", "Has anyone tried {term}?", "{term} opens a new shop on Main Street."),
    }

    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        every = self.every(platform, term)
        latest = math.floor((clock.now() - self.EPOCH) / every)
        if cursor is not None and cursor.lstrip("-").isdigit():
            first = int(cursor) + 1
        else:
            first = latest - self.FIRST_SANDBOX_POSTS + 1
        last = min(latest, first + self.SANDBOX_PAGE - 1)
        posts = [self.post(platform, term, number, every) for number in range(max(first, 0), last + 1)]
        return SearchPage(posts=posts, cursor=str(last) if posts else cursor)

    @staticmethod
    def every(platform: str, term: str) -> dt.timedelta:
        return dt.timedelta(minutes=int(_Draws(f"search:{platform}:{term}").between(5, 30)))

    def post(self, platform: str, term: str, number: int, every: dt.timedelta) -> FoundPost:
        draw = _Draws(f"search:{platform}:{term}:{number}")
        author = self.AUTHORS[int(draw.between(0, len(self.AUTHORS))) % len(self.AUTHORS)]
        mood = ("positive", "negative", "neutral")[int(draw.between(0, 3)) % 3]
        sentences = self.SENTENCES[mood]
        sentence = sentences[int(draw.between(0, len(sentences))) % len(sentences)]
        shown = f"#{term.lstrip('#')}" if platform == "mastodon" else term.replace('"', "")
        digest = hashlib.sha256(f"{platform}:{term}".encode("utf-8")).hexdigest()[:16]
        return FoundPost(
            external_id=f"sbx_search_{digest}_{number}", author=author, text=sentence.format(term=shown),
            url=f"https://sandbox.socialpub.dev/{platform}/search/{digest}/{number}", language="en",
            posted_at=self.EPOCH + number * every,
        )


def search_for(platform: str, *, livemode: bool, client: GuardedClient | None = None) -> PublicSearch:
    """The public search of a platform: the sandbox's in test mode, which never
    reaches a platform; ValueError for a platform without one."""
    if not livemode:
        return SandboxSearch()
    if platform == "bluesky":
        return BlueskySearch(client)
    if platform == "mastodon":
        return MastodonSearch(client)
    raise ValueError(f"{platform} has no public search")
