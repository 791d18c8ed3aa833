"""A page's and a block's fields checked as the contract says, for the API, the CLI
and the dashboard alike: the slug (and the names it may not take), the theme, and a
block's fields by its type, with its URL limited to http, https, mailto and tel."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from persistence.linkinbio import BlockType
from socialpub.errors import ApiError
from socialpub.mailer import checked_email
from socialpub.validation import unstorable

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Paths of the service itself, and names that would pass for it on a public page.
RESERVED_SLUGS = frozenset({
    "about", "account", "admin", "api", "app", "assets", "b", "blog", "dashboard", "docs", "help", "healthz", "i",
    "login", "logout", "mcp", "p", "preview", "readyz", "settings", "signin", "signup", "static", "status", "support",
    "test", "ui", "uploads", "www",
})
PRESETS = ("light", "dark", "contrast")
DEFAULT_THEME = {"preset": "light", "accent_color": "#1a56db"}
ACCENT = re.compile(r"^#[0-9a-fA-F]{6}$")
URL_SCHEMES = ("http", "https", "mailto", "tel")
MAX_URL_CHARS = 2048
MAX_TITLE_CHARS = 100
MAX_BIO_CHARS = 500
MAX_BLOCK_TITLE_CHARS = 200
MAX_BLOCK_TEXT_CHARS = 2000
# What each type of block takes: (required fields, allowed fields).
BLOCK_FIELDS = {
    BlockType.LINK: ({"title", "url"}, {"title", "url"}),
    BlockType.HEADER: ({"title"}, {"title"}),
    BlockType.TEXT: ({"text"}, {"text", "title"}),
    BlockType.IMAGE: ({"upload_key", "title"}, {"upload_key", "title"}),
    BlockType.SOCIAL: ({"url"}, {"url", "title"}),
    BlockType.EMAIL: ({"email"}, {"email", "title"}),
}
CONTRACT_NAMES = {"upload_key": "uploadKey"}
# ASCII control characters and whitespace, which browsers drop or fold inside a URL.
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")


def checked_slug(slug) -> str:
    if not isinstance(slug, str) or not 3 <= len(slug) <= 40 or not SLUG.match(slug):
        raise ApiError.field_invalid(
            "slug", "slug is 3 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter "
                    "or digit.")
    if slug in RESERVED_SLUGS:
        raise ApiError.field_invalid("slug", f"'{slug}' is reserved: choose another slug.")
    return slug


def checked_text(value, field: str, longest: int, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise ApiError.field_invalid(field, f"{field} is required.")
        return None
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        if required:
            raise ApiError.field_invalid(field, f"{field} must not be blank.")
        return None
    if len(text) > longest:
        raise ApiError.field_invalid(field, f"{field} may be at most {longest} characters.")
    problem = unstorable(text)
    if problem:
        raise ApiError.field_invalid(field, problem)
    return text


def checked_theme(theme) -> dict:
    """The theme as stored (`preset`, `accent_color`), the defaults for what is not given."""
    theme = theme or {}
    preset = theme.get("preset", DEFAULT_THEME["preset"])
    accent = theme.get("accent_color", DEFAULT_THEME["accent_color"])
    if preset not in PRESETS:
        raise ApiError.field_invalid("theme.preset", f"theme.preset is one of {', '.join(PRESETS)}.")
    if not isinstance(accent, str) or not ACCENT.match(accent):
        raise ApiError.field_invalid("theme.accentColor", "theme.accentColor is a color written #rrggbb.")
    return {"preset": preset, "accent_color": accent.lower()}


def checked_url(url, field: str = "url") -> str:
    """An http(s) URL with a host, or a mailto: or tel: one, as stored: trimmed, its
    scheme compared ignoring case. Any other scheme (javascript:, data:, vbscript:,
    file: ...), or a control character or space inside, is 422."""
    text = url.strip() if isinstance(url, str) else ""
    refused = f"{field} must be an http, https, mailto or tel URL."
    if not text or len(text) > MAX_URL_CHARS:
        raise ApiError.field_invalid(field, refused if text else f"{field} must not be blank.")
    if _CONTROL_OR_SPACE.search(text) or unstorable(text):
        raise ApiError.field_invalid(field, f"{field} may not hold spaces or control characters.")
    try:
        parts = urlsplit(text)
    except ValueError:
        raise ApiError.field_invalid(field, refused) from None
    scheme = parts.scheme.lower()
    if scheme not in URL_SCHEMES:
        raise ApiError.field_invalid(field, refused)
    if scheme in ("http", "https"):
        if not parts.hostname or not text[len(scheme):].startswith("://"):
            raise ApiError.field_invalid(field, f"{field} must name a host.")
    elif len(text) == len(scheme) + 1:
        raise ApiError.field_invalid(field, f"{field} must name an address or a number.")
    return scheme + text[len(scheme):]


def checked_block(block_type, fields: dict) -> dict:
    """A block's fields as stored, for its type: those it needs, none it does not take."""
    try:
        kind = BlockType(block_type)
    except ValueError:
        raise ApiError.field_invalid("type", f"type is one of {', '.join(t.value for t in BlockType)}.") from None
    required, allowed = BLOCK_FIELDS[kind]
    given = {name for name, value in fields.items() if value is not None}
    for name in sorted(given - allowed):
        shown = CONTRACT_NAMES.get(name, name)
        raise ApiError.field_invalid(shown, f"A {kind.value} block takes no {shown}.")
    for name in sorted(required - given):
        shown = CONTRACT_NAMES.get(name, name)
        raise ApiError.field_invalid(shown, f"A {kind.value} block needs {shown}.")
    checked = {"type": kind.value, "title": None, "url": None, "text": None, "upload_key": None, "email": None}
    if "title" in given:
        checked["title"] = checked_text(fields["title"], "title", MAX_BLOCK_TITLE_CHARS, required=True)
    if "text" in given:
        checked["text"] = checked_text(fields["text"], "text", MAX_BLOCK_TEXT_CHARS, required=True)
    if "url" in given:
        checked["url"] = checked_url(fields["url"])
    if "email" in given:
        checked["email"] = checked_email(fields["email"])
    if "upload_key" in given:
        checked["upload_key"] = fields["upload_key"]
    return checked
