"""A competitor's fields as the service keeps them, each checked (the API's schema
says the same, but the CLI calls the services without it), and how handles are
compared: folded (compatibility forms and accents dropped, case folded) without
their leading `@`, the form listening's signal authors are matched in."""
from __future__ import annotations

import re
import unicodedata

import httpx

from socialpub.errors import ApiError
from socialpub.platforms import PLATFORMS
from socialpub.validation import checked_name, unstorable

MAX_COMPETITORS = 20
MAX_HANDLES = 10
MAX_HANDLE_CHARS = 100
MAX_NOTES_CHARS = 5000
MAX_WEBSITE_CHARS = 2048
# A handle: no spaces or control characters (`@acme`, `acme@mastodon.social`, `acme.bsky.social`).
_HANDLE = re.compile(r"^@*[^\s@\x00-\x1f\x7f]+(@[^\s@\x00-\x1f\x7f]+)?$")


def handle_key(handle: str) -> str:
    """A handle as it is compared: NFKD without combining marks, case folded, without
    its leading `@`s (at most 200 characters)."""
    decomposed = unicodedata.normalize("NFKD", handle.strip())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.casefold().lstrip("@")[:200]


def checked_handles(handles) -> list[dict]:
    """[{platform, handle}] as saved (handles trimmed); 422 naming the entry for an
    unknown platform, a malformed handle, a Mastodon handle without its instance, or
    one given twice."""
    if not isinstance(handles, list) or not handles:
        raise ApiError.field_invalid("handles", "A competitor has at least one handle.")
    if len(handles) > MAX_HANDLES:
        raise ApiError.field_invalid("handles", f"A competitor has at most {MAX_HANDLES} handles.")
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
                f"handle must be the competitor's handle on {platform} (`@acme`, `acme@mastodon.social`), without "
                f"spaces, at most {MAX_HANDLE_CHARS} characters.",
            )
        if platform == "mastodon" and "@" not in handle.lstrip("@"):
            raise ApiError.field_invalid(
                f"handles[{index}].handle", "A Mastodon handle names its instance: `@acme@mastodon.social`.")
        key = (platform, handle_key(handle))
        if key in seen:
            raise ApiError.field_invalid(f"handles[{index}].handle", f"{handle} on {platform} is given twice.")
        seen.add(key)
        kept.append({"platform": platform, "handle": handle})
    return kept


def checked_website(website) -> str | None:
    if website is None or (isinstance(website, str) and not website.strip()):
        return None
    value = website.strip() if isinstance(website, str) else ""
    message = "website must be an http(s) address such as https://acme.example."
    if len(value) > MAX_WEBSITE_CHARS or unstorable(value) or any(ch.isspace() for ch in value):
        raise ApiError.field_invalid("website", message)
    try:
        url = httpx.URL(value)
    except Exception:  # noqa: BLE001 - any address httpx cannot read is refused
        raise ApiError.field_invalid("website", message) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ApiError.field_invalid("website", message)
    return value


def checked_notes(notes) -> str | None:
    if notes is None:
        return None
    value = notes.strip() if isinstance(notes, str) else ""
    if len(value) > MAX_NOTES_CHARS or unstorable(value):
        raise ApiError.field_invalid("notes", f"notes may be at most {MAX_NOTES_CHARS} characters of text.")
    return value or None


def checked_fields(*, name, handles, website=None, notes=None) -> dict:
    name = checked_name(name)
    if unstorable(name):
        raise ApiError.field_invalid("name", "name must be text.")
    return dict(name=name, handles=checked_handles(handles), website=checked_website(website), notes=checked_notes(notes))
