"""The platforms' public profiles, read without an account (cross-cutting, as the
connectors are): what competitor tracking reads of a handle, its followers and its
public posts with their likes, replies and reposts.

- Mastodon and Bluesky: their public readers (socialpub.connectors.public), which
  also serve listening's search.
- The sandbox (test mode): a deterministic profile per platform and handle, no
  network: followers drawn from the handle and growing each day, and a post every
  few hours (2 to 11, drawn from the handle) since 2024-01-01, each with its counts
  and hashtags drawn from its number; the cursor is the number of the last post read.
  A first reading gives the newest FIRST_SANDBOX_POSTS posts, later ones at most
  SANDBOX_PAGE after the cursor.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from typing import Protocol

from socialpub import clock
from socialpub.connectors.public import (  # noqa: F401 (what a profile reading is, named here for its readers)
    BlueskyPublic,
    MastodonPublic,
    ProfileReading,
    PublicPost,
    hashtags_of,
)
from socialpub.connectors.sandbox import _Draws
from socialpub.outbound import GuardedClient


class PublicProfiles(Protocol):
    def read_profile(self, *, handle: str, cursor: str | None) -> ProfileReading:
        """`handle`'s followers and its public posts newer than `cursor` (and those of
        the pages read to reach it). PlatformError on failure."""


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
        return MastodonPublic(client, instance_url=mastodon_url or None)
    if platform == "bluesky":
        return BlueskyPublic(client, appview_url=bluesky_url)
    raise ValueError(f"{platform} has no public profiles to read")
