"""Reading a fetched feed: RSS 2.0, RSS 1.0 (RDF) and Atom, from the bytes the
guarded client fetched.

feedparser is only ever handed the bytes, wrapped in a stream: given a string or
bytes it would treat them as a URL to fetch or a file name to open. Before it sees
them, documents that declare entities are refused: an internal DTD's entities
expand inside the XML parser (a "billion laughs" document of a few hundred bytes
expands to gigabytes), and feeds have no use for them.
"""
from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import html
import io
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import feedparser

# `<!ENTITY` in any case; UTF-16 and UTF-32 documents spell it with NUL bytes between
# the characters, which are removed before looking.
_ENTITY_DECLARATION = re.compile(rb"<!\s*ENTITY", re.IGNORECASE)
MAX_TITLE_CHARS = 1000
MAX_SUMMARY_CHARS = 5000
MAX_AUTHOR_CHARS = 500


class FeedInvalid(Exception):
    """The document is not a feed we read: the message says why, for `lastError`."""


@dataclass(frozen=True)
class Entry:
    dedupe_key: str
    guid: str | None
    title: str | None
    link: str | None
    summary: str | None
    author: str | None
    published_at: dt.datetime | None


@dataclass(frozen=True)
class Feed:
    title: str | None
    entries: list[Entry]


def declares_entities(content: bytes) -> bool:
    return bool(_ENTITY_DECLARATION.search(content) or _ENTITY_DECLARATION.search(content.replace(b"\x00", b"")))


class _TextExtractor(HTMLParser):
    """The text of an HTML fragment: tags dropped, entities decoded, scripts and
    styles left out."""

    SKIPPED = frozenset({"script", "style"})
    BREAKS = frozenset({"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping += 1
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIPPED and self.skipping:
            self.skipping -= 1
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def plain_text(value: str | None, limit: int) -> str | None:
    """HTML (or plain text) as one line of text, at most `limit` characters."""
    if not value:
        return None
    extractor = _TextExtractor()
    try:
        extractor.feed(value)
        extractor.close()
        text = "".join(extractor.parts)
    except Exception:  # noqa: BLE001 - markup too broken to parse: keep its text as it is
        text = html.unescape(value)
    text = " ".join(text.split())
    return text[:limit] or None


def _timestamp(parsed) -> dt.datetime | None:
    if not parsed:
        return None
    try:
        return dt.datetime.fromtimestamp(calendar.timegm(parsed), tz=dt.timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", errors="replace")).hexdigest()


def dedupe_key(guid: str | None, link: str | None, title: str | None, summary: str | None) -> str:
    """The guid, else the link, else the content (never the date): what makes an entry
    the same entry when the feed issues it again."""
    if guid:
        return _digest("guid", guid)
    if link:
        return _digest("link", link)
    return _digest("content", title or "", summary or "")


def _entry(raw) -> Entry:
    guid = (raw.get("id") or "").strip() or None
    link = (raw.get("link") or "").strip() or None
    title = plain_text(raw.get("title"), MAX_TITLE_CHARS)
    summary = plain_text(raw.get("summary") or _first_content(raw), MAX_SUMMARY_CHARS)
    author = plain_text(raw.get("author"), MAX_AUTHOR_CHARS)
    published = _timestamp(raw.get("published_parsed") or raw.get("updated_parsed"))
    return Entry(dedupe_key(guid, link, title, summary), guid, title, link, summary, author, published)


def _first_content(raw) -> str | None:
    content = raw.get("content") or []
    return content[0].get("value") if content else None


def _looks_like_html(content: bytes, content_type: str | None) -> bool:
    start = content.lstrip()[:200].lower()
    return (start.startswith((b"<!doctype html", b"<html"))
            or (content_type or "").split(";")[0].strip().lower() in ("text/html", "application/xhtml+xml"))


def parse(content: bytes, *, content_type: str | None = None) -> Feed:
    """The feed's title and entries, in the document's order, or FeedInvalid."""
    if declares_entities(content):
        raise FeedInvalid("The document declares XML entities (a DOCTYPE with ENTITY), which feeds do not use; refused unread.")
    # No base URL is given: feedparser would rewrite relative guids into links.
    headers = {"content-type": content_type or "application/xml"}
    parsed = feedparser.parse(io.BytesIO(content), response_headers=headers, sanitize_html=False,
                              resolve_relative_uris=False)
    if not parsed.entries:
        if _looks_like_html(content, content_type):
            raise FeedInvalid("The URL answered with an HTML page, not an RSS, Atom or RDF feed.")
        if parsed.bozo:
            raise FeedInvalid(f"The feed could not be parsed: {parsed.get('bozo_exception')}")
        if not parsed.version:
            raise FeedInvalid("The document is not an RSS, Atom or RDF feed.")
    elif not parsed.version:
        raise FeedInvalid("The document is not an RSS, Atom or RDF feed (it looks like an HTML page).")
    title = plain_text(parsed.feed.get("title"), 500)
    return Feed(title=title, entries=[_entry(raw) for raw in parsed.entries])
