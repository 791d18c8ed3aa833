"""The platforms a post can go to, and their content limits (cross-cutting: posts,
publishing and accounts share this vocabulary)."""
from __future__ import annotations

import unicodedata

from socialpub.errors import ApiError

# The platforms' documented limits, counted as each platform counts (content_length).
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
# Telegram counts a message in UTF-16 code units, as sent: a character beyond the Basic
# Multilingual Plane (most emoji) counts 2. The others count Unicode code points after
# NFC normalisation.
COUNTED_IN_UTF16: frozenset[str] = frozenset({"telegram"})


def content_length(content: str, platform: str) -> int:
    """The content's length as the platform counts it against its limit."""
    if platform in COUNTED_IN_UTF16:
        return len(content.encode("utf-16-le")) // 2
    return len(unicodedata.normalize("NFC", content))


def length_unit(platform: str) -> str:
    return "UTF-16 code units" if platform in COUNTED_IN_UTF16 else "characters"


def over_limit(content: str, platforms) -> tuple[str, int, int] | None:
    """The first chosen platform, smallest limit first, that the content is too long
    for, as (platform, the content's length there, its limit); None when it fits
    everywhere. Every platform is checked: they do not all count alike."""
    for platform in sorted(set(platforms), key=lambda name: (CONTENT_LIMITS[name], name)):
        length = content_length(content, platform)
        if length > CONTENT_LIMITS[platform]:
            return platform, length, CONTENT_LIMITS[platform]
    return None


def check_length(content: str, platforms, *, posted_on: str = "") -> None:
    """422 naming the platform the content is too long for, in that platform's count."""
    too_long = over_limit(content, platforms)
    if too_long is not None:
        platform, length, limit = too_long
        raise ApiError.field_invalid(
            "content", f"content is {length} {length_unit(platform)}; {platform}{posted_on} allows at most {limit}."
        )


# Platforms whose public APIs let a post be answered by a reply from the same account.
REPLIES_UNSUPPORTED: frozenset[str] = frozenset({"discord", "pinterest", "tiktok"})


def supports_replies(platform: str) -> bool:
    return platform not in REPLIES_UNSUPPORTED
