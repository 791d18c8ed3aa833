"""A competitor's fields as the service keeps them, each checked (the API's schema
says the same, but the CLI calls the services without it); handles are checked and
compared by socialpub.handles, as influencers' are."""
from __future__ import annotations


import httpx

from socialpub.errors import ApiError
from socialpub.handles import checked_handles
from socialpub.validation import checked_name, unstorable

MAX_COMPETITORS = 20
MAX_HANDLES = 10
MAX_NOTES_CHARS = 5000
MAX_WEBSITE_CHARS = 2048


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
    return dict(name=name, handles=checked_handles(handles, owner="competitor", example="acme", at_most=MAX_HANDLES,
                                                      instance_required=True), website=checked_website(website), notes=checked_notes(notes))
