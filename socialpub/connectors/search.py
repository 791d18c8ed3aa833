"""The platforms' public search, read without an account (cross-cutting, as the
connectors are): what social listening polls.

- Bluesky (`app.bsky.feed.searchPosts`) and Mastodon (an instance's hashtag
  timeline): their public readers (socialpub.connectors.public), which also serve
  competitors' profiles.
- The sandbox (test mode): a deterministic stream per platform and term, no network:
  a post every few minutes (5 to 29, drawn from the term) since 2024-01-01, each
  drawn from its number (its author, and a positive, negative or neutral sentence
  holding the term, as a hashtag on Mastodon); the cursor is the number of the last
  post read. A first search reads the newest FIRST_SANDBOX_POSTS; each search reads
  at most SANDBOX_PAGE posts after the cursor, oldest first.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from typing import Protocol

from socialpub import clock
from socialpub.connectors.public import (  # noqa: F401 (what a search finds, named here for its readers)
    BlueskyPublic,
    FoundPost,
    MastodonPublic,
    SearchPage,
)
from socialpub.connectors.sandbox import _Draws
from socialpub.outbound import GuardedClient


class PublicSearch(Protocol):
    def search_public(self, *, platform: str, base_url: str, term: str, cursor: str | None) -> SearchPage:
        """The public posts of `term` (a Bluesky query, a Mastodon hashtag) newer than
        `cursor`, from the service at `base_url`; without a cursor, the newest page
        only (a first search reads no backlog beyond it). PlatformError on failure."""


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
        return BlueskyPublic(client)
    if platform == "mastodon":
        return MastodonPublic(client)
    raise ValueError(f"{platform} has no public search")
