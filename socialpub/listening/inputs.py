"""A signal to ingest, checked: the rules of the contract's `SignalCreate`, for
whoever ingests (the API's single and bulk ingest, and the platforms' poll), each
refusal an ApiError naming the field by its domain name."""
from __future__ import annotations

import datetime as dt
import re

from socialpub import platforms as platform_rules
from socialpub.errors import ApiError
from socialpub.listening.languages import ISO_639_1

MAX_CONTENT_CHARS = 10_000
MAX_EXTERNAL_ID_CHARS = 255
MAX_AUTHOR_CHARS = 500
MAX_URL_CHARS = 2048
# JavaScript's largest exact integer: every client reads a reach as it was sent.
MAX_REACH = 2**53 - 1
# The contract's pattern for `url`, trimmed: http or https in any case, then a host.
URL = re.compile(r"^[hH][tT][tT][pP][sS]?://[^\s/?#]\S*$")
FIELDS = ("platform", "external_id", "author", "content", "url", "language", "reach", "posted_at")


def item_fields(item) -> dict:
    """A signal's fields (FIELDS, by their domain names) as stored, or the ApiError
    naming what is wrong with them; an item already refused when read (an ApiError)
    is refused as it was."""
    if isinstance(item, ApiError):
        raise item
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise ApiError.field_invalid(unknown[0], f"Unknown field(s): {', '.join(unknown)}.")
    platform = item.get("platform")
    if platform not in platform_rules.PLATFORMS:
        raise ApiError.field_invalid("platform", _missing("platform", item) or
                                     f"'{platform}' is not one of the supported platforms.")
    return {
        "platform": platform,
        "external_id": _external_id(item),
        "author": _author(item.get("author")),
        "content": _content(item),
        "url": _url(item.get("url")),
        "language": _language(item.get("language")),
        "reach": _reach(item.get("reach")),
        "posted_at": _posted_at(item),
    }


def _missing(name: str, item) -> str | None:
    return "This field is required." if item.get(name) is None else None


def _external_id(item) -> str:
    value = item.get("external_id")
    if not isinstance(value, str):
        raise ApiError.field_invalid("external_id", _missing("external_id", item) or "externalId must be a string.")
    value = value.strip()
    if not value:
        raise ApiError.field_invalid("external_id", "externalId must not be blank.")
    if len(value) > MAX_EXTERNAL_ID_CHARS:
        raise ApiError.field_invalid("external_id", f"externalId may be at most {MAX_EXTERNAL_ID_CHARS} characters.")
    return value


def _author(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ApiError.field_invalid("author", "author must be text that is not blank, or null.")
    value = value.strip()
    if len(value) > MAX_AUTHOR_CHARS:
        raise ApiError.field_invalid("author", f"author may be at most {MAX_AUTHOR_CHARS} characters.")
    return value


def _content(item) -> str:
    value = item.get("content")
    if not isinstance(value, str):
        raise ApiError.field_invalid("content", _missing("content", item) or "content must be a string.")
    if not value.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    if len(value) > MAX_CONTENT_CHARS:
        raise ApiError.field_invalid("content", f"content may be at most {MAX_CONTENT_CHARS} characters.")
    return value


def _url(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError.field_invalid("url", "url must be a string or null.")
    if len(value) > MAX_URL_CHARS:
        raise ApiError.field_invalid("url", f"url may be at most {MAX_URL_CHARS} characters.")
    value = value.strip()
    if not URL.match(value):
        raise ApiError.field_invalid("url", "url must be an http or https URL with a host, without spaces.")
    return value


def _language(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in ISO_639_1:
        raise ApiError.field_invalid(
            "language", f"'{value}' is not an ISO 639-1 language code (two lowercase letters)."
        )
    return value


def _reach(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REACH:
        raise ApiError.field_invalid("reach", f"reach must be a whole number from 0 to {MAX_REACH}, or null.")
    return value


def _posted_at(item) -> dt.datetime:
    value = item.get("posted_at")
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise ApiError.field_invalid("posted_at", _missing("posted_at", item) or
                                     "postedAt must be a timestamp with a timezone offset.")
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:
        raise ApiError.field_invalid("posted_at", "postedAt is out of range in UTC.") from None
