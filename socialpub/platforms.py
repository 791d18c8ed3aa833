"""The platforms a post can go to, and their content rules (cross-cutting: posts,
publishing, accounts and the AI assistant share this vocabulary).

One table, `RULES`: per platform, its limit, how it counts a text against it, whether
it takes a text-only post, and whether a post can be answered by a reply from the same
account. Every rule comes from the platform's public documentation."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from twitter_text import parse_tweet

from socialpub.errors import ApiError

CODE_POINTS = "characters"
UTF16 = "UTF-16 code units"
WEIGHTED = "weighted characters"
EMOJI_BYTES = "characters (an emoji counting its UTF-8 bytes)"
# What Threads counts an emoji as its UTF-8 bytes for: Unicode's emoji blocks, with
# the zero-width joiner, variation selectors and tag characters that compose emoji.
_EMOJI_RANGES = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x2B00, 0x2BFF), (0xFE00, 0xFE0F),
                 (0x200D, 0x200D), (0xE0020, 0xE007F))


@dataclass(frozen=True)
class Rules:
    limit: int
    # How a text is counted against `limit`: Unicode code points after NFC
    # normalisation, UTF-16 code units as sent (Telegram: most emoji count 2), X's
    # weighted count (twitter-text: a URL counts 23, CJK and emoji 2), or code points
    # with an emoji counting its UTF-8 bytes (Threads: most emoji count 4).
    counted_in: str = CODE_POINTS
    # False where the platform takes no post without media (Instagram, TikTok,
    # YouTube, Pinterest): media cannot be attached through this API, so scheduling or
    # publishing to them is refused; their accounts are connected for metrics.
    text_posts: bool = True
    replies: bool = True


RULES: dict[str, Rules] = {
    "twitter": Rules(280, counted_in=WEIGHTED),
    "linkedin": Rules(3000),
    "facebook": Rules(63206),
    "instagram": Rules(2200, text_posts=False),
    "threads": Rules(500, counted_in=EMOJI_BYTES),
    "mastodon": Rules(500),
    "bluesky": Rules(300),
    "pinterest": Rules(800, text_posts=False, replies=False),
    "tiktok": Rules(2200, text_posts=False, replies=False),
    "youtube": Rules(5000, text_posts=False),
    "telegram": Rules(4096, counted_in=UTF16),
    "discord": Rules(2000, replies=False),
}
PLATFORMS: tuple[str, ...] = tuple(RULES)
# Each platform's name as its owner writes it (X is still `twitter` in the API).
NAMES = {
    "twitter": "X", "linkedin": "LinkedIn", "facebook": "Facebook", "instagram": "Instagram", "threads": "Threads",
    "mastodon": "Mastodon", "bluesky": "Bluesky", "pinterest": "Pinterest", "tiktok": "TikTok", "youtube": "YouTube",
    "telegram": "Telegram", "discord": "Discord",
}


def display_name(platform: str) -> str:
    """The platform's name as its owner spells it (LinkedIn, TikTok, YouTube)."""
    return NAMES.get(platform, platform.capitalize())
CONTENT_LIMITS: dict[str, int] = {platform: rules.limit for platform, rules in RULES.items()}
# The platforms that take no text-only post, which the contract names per platform.
MEDIA_ONLY: tuple[str, ...] = tuple(platform for platform, rules in RULES.items() if not rules.text_posts)


def content_length(content: str, platform: str) -> int:
    """The content's length as the platform counts it against its limit."""
    counted_in = RULES[platform].counted_in
    if counted_in == UTF16:
        return len(content.encode("utf-16-le")) // 2
    if counted_in == WEIGHTED:
        return parse_tweet(unicodedata.normalize("NFC", content)).weightedLength
    if counted_in == EMOJI_BYTES:
        return sum(len(ch.encode()) if _is_emoji(ch) else 1 for ch in unicodedata.normalize("NFC", content))
    return len(unicodedata.normalize("NFC", content))


def _is_emoji(character: str) -> bool:
    code = ord(character)
    return any(low <= code <= high for low, high in _EMOJI_RANGES)


def length_unit(platform: str) -> str:
    return RULES[platform].counted_in


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


def check_text_posts(platforms) -> None:
    """422 naming the platforms that take no text-only post, when a post would go to
    them (scheduled or published): media is attached in the application, not here."""
    refused = [platform for platform in platforms if platform in RULES and not RULES[platform].text_posts]
    if refused:
        raise ApiError.field_invalid(
            "platforms",
            f"{', '.join(refused)} {'takes' if len(refused) == 1 else 'take'} no text-only post, and media is "
            "attached in the application, not through the API: a post can be a draft for "
            f"{'it' if len(refused) == 1 else 'them'} but cannot be scheduled or published there.",
        )


def supports_replies(platform: str) -> bool:
    return RULES[platform].replies if platform in RULES else False
