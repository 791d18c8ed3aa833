"""Handles on the platforms, one way for every area that keeps them (influencers,
competitors): `[{platform, handle}]` checked as saved (handles trimmed, 422 naming the
entry), and compared by `handle_key`: folded (compatibility forms and accents dropped,
case folded) without their leading `@`, the form listening's signal authors are
matched in."""
from __future__ import annotations

import re
import unicodedata

from socialpub.errors import ApiError
from socialpub.platforms import PLATFORMS
from socialpub.validation import unstorable

MAX_HANDLE_CHARS = 100
# A handle: no spaces or control characters (`@ana`, `ana@mastodon.social`, `ana.bsky.social`).
_HANDLE = re.compile(r"^@*[^\s@\x00-\x1f\x7f]+(@[^\s@\x00-\x1f\x7f]+)?$")


def handle_key(handle: str) -> str:
    """A handle as it is compared: NFKD without combining marks, case folded, without
    its leading `@`s (at most 200 characters: folding may lengthen a text, as NFKD
    spells out a ligature)."""
    decomposed = unicodedata.normalize("NFKD", handle.strip())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.casefold().lstrip("@")[:200]


def checked_handles(handles, *, owner: str, example: str, at_most: int, instance_required: bool = False) -> list[dict]:
    """[{platform, handle}] as saved; 422 naming the entry for an unknown platform, a
    malformed handle, one given twice, or (`instance_required`) a Mastodon handle
    without its instance. `owner` names the record ("influencer"), `example` a
    handle of it ("ana")."""
    article = "An" if owner[:1] in "aeiou" else "A"
    if not isinstance(handles, list) or not handles:
        raise ApiError.field_invalid("handles", f"{article} {owner} has at least one handle.")
    if len(handles) > at_most:
        raise ApiError.field_invalid("handles", f"{article} {owner} has at most {at_most} handles.")
    kept, seen = [], set()
    for index, entry in enumerate(handles):
        platform = entry.get("platform") if isinstance(entry, dict) else None
        handle = entry.get("handle") if isinstance(entry, dict) else None
        if platform not in PLATFORMS:
            raise ApiError.field_invalid(f"handles[{index}].platform", f"platform must be one of {', '.join(PLATFORMS)}.")
        handle = handle.strip() if isinstance(handle, str) else ""
        if not handle or len(handle) > MAX_HANDLE_CHARS or unstorable(handle) or not _HANDLE.match(handle):
            raise ApiError.field_invalid(
                f"handles[{index}].handle",
                f"handle must be the {owner}'s handle on {platform} (`@{example}`, `{example}@mastodon.social`), "
                f"without spaces, at most {MAX_HANDLE_CHARS} characters.",
            )
        if instance_required and platform == "mastodon" and "@" not in handle.lstrip("@"):
            raise ApiError.field_invalid(
                f"handles[{index}].handle", f"A Mastodon handle names its instance: `@{example}@mastodon.social`.")
        key = (platform, handle_key(handle))
        if key in seen:
            raise ApiError.field_invalid(f"handles[{index}].handle", f"{handle} on {platform} is given twice.")
        seen.add(key)
        kept.append({"platform": platform, "handle": handle})
    return kept
