"""The platforms' public profiles, read without an account (cross-cutting, as the
connectors are): what competitor tracking reads of a handle, its followers and its
public posts with their likes, replies and reposts.

- Mastodon: the instance's `GET /api/v1/accounts/lookup?acct=` (the account, with
  `followers_count`), then `GET /api/v1/accounts/{id}/statuses` (`limit` up to 40,
  `exclude_reblogs`, paged back with `max_id`), newest first.
- Bluesky: the public AppView's `app.bsky.actor.getProfile` (`followersCount`) and
  `app.bsky.feed.getAuthorFeed` (`filter=posts_no_replies`, `limit` up to 100, paged
  back with `cursor`); reposts (items with a `reason`) are left out.

A reading pages back from the newest post until it meets the cursor it was given
(the newest post the previous reading saw: a Mastodon status id, a Bluesky
`indexedAt`), at most PAGES pages; a first reading reads the newest page only.
Posts of the pages read are all given, so the counts of the recent ones are read
again each time.

- The sandbox (test mode): a deterministic profile per platform and handle, no
  network: followers drawn from the handle and growing each day, and a post every
  few hours (2 to 11, drawn from the handle) since 2024-01-01, each with its counts
  and hashtags drawn from its number; the cursor is the number of the last post read.
  A first reading gives the newest FIRST_SANDBOX_POSTS posts, later ones at most
  SANDBOX_PAGE after the cursor.

Every request goes through the guarded outbound client (socialpub.outbound) with the
connectors' error mapping (`_common`): failures are PlatformError.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlencode

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors.base import PlatformError
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.sandbox import _Draws
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


class PublicProfiles(Protocol):
    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        """`handle`'s followers and its public posts newer than `cursor` (and those of
        the pages read to reach it). PlatformError on failure."""


def hashtags_of(text: str, given=()) -> tuple[str, ...]:
    """The hashtags of a post, lower-cased, each once, in order: those the platform
    names and those written in the text."""
    seen: list[str] = []
    for tag in [*given, *_HASHTAG.findall(text or "")]:
        tag = tag.lstrip("#").casefold()[:100] if isinstance(tag, str) else ""
        if tag and tag not in seen:
            seen.append(tag)
    return tuple(seen)


def _get(client: GuardedClient, url: str, platform: str) -> Response:
    return c.send(client, "GET", url, platform=platform, redact=c.Redactor(), headers={"Accept": "application/json"})


def _service(base_url: str, platform: str) -> str:
    try:
        return c.base_url(base_url, f"{platform}'s URL")
    except ValueError as exc:
        raise PlatformError(c.DESTINATION_REFUSED, f"{platform}: {exc}", transient=False) from None


def _error(platform: str, response: Response, what: str) -> PlatformError:
    body = c.json_or_none(response)
    parts = [body.get(name) for name in ("error", "message")] if isinstance(body, dict) else []
    text = ": ".join(c.detail(part, c.Redactor()) for part in parts if isinstance(part, str) and part)
    status = response.status_code
    if isinstance(body, dict) and body.get("error") == "RateLimitExceeded":
        status = 429
    if status == 404 or (status == 400 and isinstance(body, dict) and body.get("error") in ("InvalidRequest", "AccountNotFound")):
        return PlatformError(c.REJECTED, f"{platform}: {what} was not found" + (f" ({text})" if text else "") + ".",
                             transient=False)
    wait = c.seconds_until_epoch(response.headers.get("ratelimit-reset")) or c.seconds_until_iso(
        response.headers.get("X-RateLimit-Reset"))
    return c.error_for_status(platform, response, text, status=status, platform_wait=wait, refused=what)


def _when(value) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _order(status_id: str) -> tuple[int, str]:
    # Mastodon ids are decimal snowflakes as strings: longer is newer.
    return len(status_id), status_id


class MastodonProfiles(c.HttpConnector):
    """A Mastodon account's public profile, read on `instance_url` (an instance that
    knows the account; its own, https://<its domain>, when None)."""

    name = "mastodon"
    PLATFORM = "Mastodon"
    PAGE = 40
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
        instance = _service(self.instance_url or f"https://{domain}", self.PLATFORM)
        url = f"{instance}/api/v1/accounts/lookup?{urlencode({'acct': acct})}"
        response = _get(self.client, url, self.PLATFORM)
        if not 200 <= response.status_code < 300:
            raise _error(self.PLATFORM, response, f"the account {handle}")
        account = c.reply_object(response, self.PLATFORM, url)
        account_id = str(account.get("id") or "")
        if not account_id.isdigit():
            raise c.malformed(self.PLATFORM, "an account with an id", response, url)
        posts: list[PublicPost] = []
        newest, max_id = cursor, None
        for _ in range(PAGES if cursor else 1):
            query = {"limit": self.PAGE, "exclude_reblogs": "true", **({"max_id": max_id} if max_id else {})}
            url = f"{instance}/api/v1/accounts/{account_id}/statuses?{urlencode(query)}"
            response = _get(self.client, url, self.PLATFORM)
            if not 200 <= response.status_code < 300:
                raise _error(self.PLATFORM, response, f"the statuses of {handle}")
            statuses = c.json_or_none(response)
            if not isinstance(statuses, list):
                raise c.malformed(self.PLATFORM, "a list of statuses", response, url)
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
                parsed = self._post(status, domain)
                if parsed is not None:
                    posts.append(parsed)
            if reached or oldest is None or len(statuses) < self.PAGE:
                break
            max_id = oldest
        return ProfileReading(followers=_count(account.get("followers_count")), posts=posts, cursor=newest)

    @classmethod
    def _post(cls, status: dict, host: str) -> PublicPost | None:
        if status.get("reblog") or status.get("visibility") not in (None, "public", "unlisted"):
            return None
        posted_at = _when(status.get("created_at"))
        if posted_at is None:
            return None
        identity = status.get("uri") or status.get("url") or f"https://{host}/statuses/{status['id']}"
        if not isinstance(identity, str) or len(identity) > cls.MAX_ID_CHARS:
            identity = "sha256:" + hashlib.sha256(str(identity).encode("utf-8")).hexdigest()
        text = MastodonConnector._plain_text(status.get("content"))
        tags = [tag.get("name") for tag in status.get("tags") or () if isinstance(tag, dict)]
        return PublicPost(
            external_id=identity, text=text, url=status.get("url") if isinstance(status.get("url"), str) else None,
            posted_at=posted_at, likes=_count(status.get("favourites_count")), replies=_count(status.get("replies_count")),
            reposts=_count(status.get("reblogs_count")), hashtags=hashtags_of(text, tags),
        )


class BlueskyProfiles(c.HttpConnector):
    """A Bluesky account's public profile, read on the public AppView at `appview_url`."""

    name = "bluesky"
    PLATFORM = "Bluesky"
    PAGE = 50

    def __init__(self, client: GuardedClient | None = None, *, appview_url: str = "https://public.api.bsky.app"):
        super().__init__(client)
        self.appview_url = appview_url

    @c.platform_errors_only
    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        actor = handle.strip().lstrip("@")
        service = _service(self.appview_url, self.PLATFORM)
        url = f"{service}/xrpc/app.bsky.actor.getProfile?{urlencode({'actor': actor})}"
        response = _get(self.client, url, self.PLATFORM)
        if not 200 <= response.status_code < 300:
            raise _error(self.PLATFORM, response, f"the profile {handle}")
        profile = c.reply_object(response, self.PLATFORM, url)
        posts: list[PublicPost] = []
        newest, page_cursor = cursor, None
        for _ in range(PAGES if cursor else 1):
            params = {"actor": actor, "limit": self.PAGE, "filter": "posts_no_replies"}
            if page_cursor:
                params["cursor"] = page_cursor
            url = f"{service}/xrpc/app.bsky.feed.getAuthorFeed?{urlencode(params)}"
            response = _get(self.client, url, self.PLATFORM)
            if not 200 <= response.status_code < 300:
                raise _error(self.PLATFORM, response, f"the posts of {handle}")
            body = c.reply_object(response, self.PLATFORM, url)
            feed = body.get("feed")
            if not isinstance(feed, list):
                raise c.malformed(self.PLATFORM, "a feed", response, url)
            reached = False
            for item in feed:
                post = item.get("post") if isinstance(item, dict) and not item.get("reason") else None
                indexed = post.get("indexedAt") if isinstance(post, dict) else None
                if not isinstance(indexed, str):
                    continue
                if cursor and indexed <= cursor:
                    reached = True
                newest = indexed if newest is None or indexed > newest else newest
                parsed = self._post(post, actor)
                if parsed is not None:
                    posts.append(parsed)
            page_cursor = body.get("cursor") if isinstance(body.get("cursor"), str) else None
            if reached or not page_cursor or not feed:
                break
        return ProfileReading(followers=_count(profile.get("followersCount")), posts=posts, cursor=newest)

    @staticmethod
    def _post(post: dict, actor: str) -> PublicPost | None:
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


class SandboxProfiles:
    """The deterministic profiles test mode reads (the module's docstring)."""

    name = "sandbox"
    EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    FIRST_SANDBOX_POSTS = 20
    SANDBOX_PAGE = 100
    HASHTAGS = ("launch", "sale", "tips", "behindthescenes", "news", "community", "giveaway")
    TEXTS = ("New this week: {tag} for everyone.", "Our team shares {tag} today.", "Thank you all! {tag}",
             "Five things we learned about {tag}.")

    def __init__(self, platform: str):
        self.platform = platform

    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        key = f"{self.platform}:{handle.strip().lstrip('@').casefold()}"
        every = dt.timedelta(hours=int(_Draws(f"profile:{key}").between(2, 12)))
        now = clock.now()
        latest = math.floor((now - self.EPOCH) / every)
        if cursor is not None and cursor.isdigit():
            first = int(cursor) + 1
        else:
            first = latest - self.FIRST_SANDBOX_POSTS + 1
        last = min(latest, first + self.SANDBOX_PAGE - 1)
        posts = [self.post(key, number, every, now) for number in range(last, max(first, 0) - 1, -1)]
        return ProfileReading(followers=self.followers(key, now), posts=posts, cursor=str(last) if posts else cursor)

    def followers(self, key: str, at: dt.datetime) -> int:
        draw = _Draws(f"profile-followers:{key}")
        base, per_day = draw.between(1_000, 50_000), draw.between(5, 60)
        return math.floor(base + per_day * max(0.0, (at - self.EPOCH).total_seconds() / 86400))

    def post(self, key: str, number: int, every: dt.timedelta, now: dt.datetime) -> PublicPost:
        draw = _Draws(f"profile:{key}:{number}")
        tag = self.HASHTAGS[int(draw.between(0, len(self.HASHTAGS))) % len(self.HASHTAGS)]
        text = self.TEXTS[int(draw.between(0, len(self.TEXTS))) % len(self.TEXTS)].format(tag=f"#{tag}")
        # One post in twenty takes off.
        scale = 20 if draw.between(0, 1) < 0.05 else 1
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return PublicPost(
            external_id=f"sbx_profile_{digest}_{number}", text=text,
            url=f"https://sandbox.socialpub.dev/{self.platform}/profile/{digest}/{number}",
            posted_at=self.EPOCH + number * every, likes=int(draw.between(5, 120)) * scale,
            replies=int(draw.between(0, 15)) * scale, reposts=int(draw.between(0, 30)) * scale, hashtags=(tag,),
        )


# The platforms whose public profiles can be read (live).
READ_PLATFORMS = ("mastodon", "bluesky")


def profiles_for(platform: str, *, livemode: bool, client: GuardedClient | None = None,
                 mastodon_url: str | None = None, bluesky_url: str = "https://public.api.bsky.app") -> PublicProfiles:
    """The public profiles of a platform: the sandbox's in test mode (every platform),
    which never reaches a platform; ValueError for a live platform without them."""
    if not livemode:
        return SandboxProfiles(platform)
    if platform == "mastodon":
        return MastodonProfiles(client, instance_url=mastodon_url or None)
    if platform == "bluesky":
        return BlueskyProfiles(client, appview_url=bluesky_url)
    raise ValueError(f"{platform} has no public profiles to read")
