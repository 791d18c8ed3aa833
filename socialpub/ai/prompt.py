"""What a model is told, and how its answer is read: the system prompt carrying the
brand context, the drafts marked up in a reply, and the follow-up that names a
broken rule."""
from __future__ import annotations

import re

from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.rules import Draft, Violation, fold
from socialpub.platforms import CONTENT_LIMITS, PLATFORMS, length_unit

# How the user names a platform, beyond its own name.
PLATFORM_ALIASES: dict[str, str] = {
    **{platform: platform for platform in PLATFORMS},
    "tweet": "twitter", "tweets": "twitter", "insta": "instagram", "ig": "instagram",
    "bsky": "bluesky", "toot": "mastodon", "toots": "mastodon", "fb": "facebook", "yt": "youtube", "x": "twitter",
}
DRAFT_BLOCK = re.compile(r"<draft\s+platform\s*=\s*[\"']?([\w.-]+)[\"']?\s*>(.*?)</draft>", re.S | re.I)


def platforms_named(message: str) -> list[str]:
    """The platforms a message names, in the order it names them."""
    named: list[str] = []
    for word in re.findall(r"\w+", fold(message)):
        platform = PLATFORM_ALIASES.get(word)
        if platform and platform not in named:
            named.append(platform)
    return named


def system_prompt(brand: BrandContextView, *, platforms: list[str]) -> str:
    lines = [(
        "You are the social media assistant of this brand. You answer questions about its "
        "social media and write posts for it, in its voice."
    )]
    if brand.voice:
        lines.append(f"Brand voice: {brand.voice}")
    if brand.audience:
        lines.append(f"Audience: {brand.audience}")
    if brand.hashtags:
        lines.append(f"The brand's hashtags (use those that fit): {' '.join(brand.hashtags)}")
    if brand.banned_words:
        lines.append(
            "Never write these words or phrases, in any case or spelling, not even to quote them: "
            + ", ".join(brand.banned_words)
        )
    if brand.sample_posts:
        lines.append("Posts that show the brand's voice:")
        lines.extend(f"- {sample}" for sample in brand.sample_posts)
    limits = ", ".join(
        f"{platform} {CONTENT_LIMITS[platform]} {length_unit(platform)}" for platform in (platforms or PLATFORMS)
    )
    lines.append(
        "When you are asked for posts, write each one as <draft platform=\"NAME\">the post</draft>, "
        f"one per platform, and keep each within its platform's limit: {limits}. "
        "Keep any other text short."
    )
    return "\n".join(lines)


def with_drafts(content: str, drafts: list[dict] | None) -> str:
    """A stored reply as the model first wrote it: its text and its drafts marked up."""
    blocks = [f"<draft platform=\"{draft['platform']}\">{draft['content']}</draft>" for draft in drafts or []]
    return "\n\n".join([part for part in [content, *blocks] if part])


def read_reply(text: str) -> tuple[str, list[Draft]]:
    """A model's answer as (message, drafts): the drafts are taken out of the text."""
    drafts = [
        Draft(platform=PLATFORM_ALIASES.get(fold(name), fold(name)), content=body.strip())
        for name, body in DRAFT_BLOCK.findall(text)
    ]
    content = re.sub(r"\n{3,}", "\n\n", DRAFT_BLOCK.sub("", text)).strip()
    if not content and drafts:
        content = "Here are drafts for " + _joined([draft.platform for draft in drafts]) + "."
    return content, drafts


def correction(found: list[Violation]) -> str:
    """The extra message a model gets when its reply broke a rule."""
    problems = "\n".join(f"- {violation.message}" for violation in found)
    return (
        "Your last reply broke the brand's rules:\n" + problems
        + "\nWrite the whole reply again without these problems."
    )


def _joined(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " and " + unique[-1]
