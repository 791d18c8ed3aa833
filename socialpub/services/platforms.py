"""The platforms a post can go to, and their content limits."""
from __future__ import annotations

import unicodedata

# Unicode code points after NFC normalisation, the platforms' documented limits.
CONTENT_LIMITS: dict[str, int] = {
    "twitter": 280,
    "linkedin": 3000,
    "facebook": 63206,
    "instagram": 2200,
    "threads": 500,
    "mastodon": 500,
    "bluesky": 300,
    "pinterest": 500,
    "tiktok": 2200,
    "youtube": 5000,
    "telegram": 4096,
    "discord": 2000,
}
PLATFORMS: tuple[str, ...] = tuple(CONTENT_LIMITS)


def content_length(content: str) -> int:
    return len(unicodedata.normalize("NFC", content))


def strictest(platforms) -> tuple[str, int]:
    """The chosen platform with the smallest limit, and that limit."""
    return min(((p, CONTENT_LIMITS[p]) for p in platforms), key=lambda item: (item[1], item[0]))

# Platforms whose public APIs let a post be answered by a reply from the same account.
REPLIES_UNSUPPORTED: frozenset[str] = frozenset({"discord", "pinterest", "tiktok"})


def supports_replies(platform: str) -> bool:
    return platform not in REPLIES_UNSUPPORTED
