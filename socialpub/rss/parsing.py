"""Reading a fetched feed: RSS 2.0, RSS 1.0 (RDF) and Atom, from the bytes the
guarded client fetched.

feedparser is only ever handed bytes, wrapped in a stream: given a string or bytes
it would treat them as a URL to fetch or a file name to open.

Entities. An internal DTD's entities expand inside the XML parser (a "billion laughs"
document of a few hundred bytes expands to gigabytes), and feeds have no use for
them: a document that declares one is refused unread. The declaration is looked for
in the text the XML parser is given, not only in the bytes fetched: the document is
decoded first, by feedparser's own rules (BOM, HTTP charset, XML declaration, then
guesses), into the UTF-8 that its parser then reads, so no encoding (UTF-16, UTF-32,
EBCDIC, a declaration that lies) hides `<!ENTITY` from the check. A DOCTYPE without
an internal subset (RSS 0.91's) is read as before, and no external DTD is fetched.

What a feed yields is bounded: a document's newest `MAX_ENTRIES` entries are read
(by date when every entry has one, else the first in the document's order, which
lists the newest first); how many were left out, and the newest date among them, are
told to the fetch. Text is made storable here, at the edge: the NUL character and
lone surrogates (`socialpub.validation.UNSTORABLE`, what PostgreSQL and SQLite's UTF-8
cannot hold) are removed or replaced, and character references to them (which
feedparser's lenient parser turns into those characters, or fails on) are replaced
before parsing. A guid is kept to `MAX_GUID_CHARS` (the dedupe key hashes all of
it), and a link longer than `MAX_LINK_CHARS` is no link.
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
from feedparser.encodings import convert_to_utf8

from socialpub.validation import UNSTORABLE

# `<!ENTITY` in any case; UTF-16 and UTF-32 documents spell it with NUL bytes between
# the characters, which are removed before looking.
_ENTITY_DECLARATION = re.compile(rb"<!\s*ENTITY", re.IGNORECASE)
# A numeric character reference, to check that it names a character text can hold.
_CHARACTER_REFERENCE = re.compile(rb"&#([xX][0-9a-fA-F]{1,16}|[0-9]{1,20});")
MAX_TITLE_CHARS = 1000
MAX_SUMMARY_CHARS = 5000
MAX_AUTHOR_CHARS = 500
# The guid stored with an item (it is not shown; the dedupe key is the SHA-256 of the
# whole guid, so two long guids that share their first characters stay two entries).
MAX_GUID_CHARS = 1000
# A link longer than this (the longest feed URL accepted) is not one a post can carry:
# the item has no link, and the entry is still told apart by it.
MAX_LINK_CHARS = 2048
# The newest entries of a document that a fetch reads.
MAX_ENTRIES = 500


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
    # At most MAX_ENTRIES, the newest first.
    entries: list[Entry]
    # Entries of the document left unread (older than those read), and the newest
    # date among them (None when none has a date).
    unread: int = 0
    unread_until: dt.datetime | None = None


def declares_entities(content: bytes) -> bool:
    return bool(_ENTITY_DECLARATION.search(content) or _ENTITY_DECLARATION.search(content.replace(b"\x00", b"")))


def storable(text: str) -> str:
    """`text` without what cannot be stored: NUL removed, a lone surrogate replaced
    by U+FFFD."""
    if UNSTORABLE.search(text) is None:
        return text
    return UNSTORABLE.sub(lambda found: "" if found.group() == "\x00" else "\ufffd", text)


def _storable_reference(found: re.Match) -> bytes:
    digits = found.group(1)
    code = int(digits[1:], 16) if digits[:1] in (b"x", b"X") else int(digits)
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return b"&#xFFFD;"
    return found.group()


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
    """HTML (or plain text) as one line of storable text, at most `limit` characters."""
    if not value:
        return None
    extractor = _TextExtractor()
    try:
        extractor.feed(value)
        extractor.close()
        text = "".join(extractor.parts)
    except Exception:  # noqa: BLE001 - markup too broken to parse: keep its text as it is
        text = html.unescape(value)
    text = " ".join(storable(text).split())
    return text[:limit] or None


def _timestamp(parsed) -> dt.datetime | None:
    if not parsed:
        return None
    try:
        return dt.datetime.fromtimestamp(calendar.timegm(parsed), tz=dt.timezone.utc)
    except (OverflowError, ValueError, OSError, TypeError):
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


def _identifier(value) -> str | None:
    return (storable(value).strip() or None) if isinstance(value, str) else None


def _entry(raw, published: dt.datetime | None) -> Entry:
    guid = _identifier(raw.get("id"))
    link = _identifier(raw.get("link"))
    title = plain_text(raw.get("title"), MAX_TITLE_CHARS)
    summary = plain_text(raw.get("summary") or _first_content(raw), MAX_SUMMARY_CHARS)
    author = plain_text(raw.get("author"), MAX_AUTHOR_CHARS)
    key = dedupe_key(guid, link, title, summary)
    usable_link = link if link is not None and len(link) <= MAX_LINK_CHARS else None
    return Entry(key, guid[:MAX_GUID_CHARS] if guid else None, title, usable_link, summary, author, published)


def _first_content(raw) -> str | None:
    content = raw.get("content") or []
    return content[0].get("value") if content else None


def _looks_like_html(content: bytes, content_type: str | None) -> bool:
    start = content.lstrip()[:200].lower()
    return (start.startswith((b"<!doctype html", b"<html"))
            or (content_type or "").split(";")[0].strip().lower() in ("text/html", "application/xhtml+xml"))


def decode(content: bytes, content_type: str | None) -> bytes:
    """The document as the UTF-8 feedparser's XML parser reads, with its XML
    declaration saying so: feedparser's own choice of encoding, made once."""
    return convert_to_utf8({"content-type": content_type or "application/xml"}, content, {})


def _newest(raw_entries) -> tuple[list[tuple], list[tuple]]:
    """(read, unread): (raw entry, date) pairs, the newest MAX_ENTRIES first."""
    dated = [(raw, _timestamp(raw.get("published_parsed") or raw.get("updated_parsed"))) for raw in raw_entries]
    if all(published for _, published in dated):
        # Stable: entries of one date keep the document's order.
        dated.sort(key=lambda pair: pair[1], reverse=True)
    return dated[:MAX_ENTRIES], dated[MAX_ENTRIES:]


def parse(content: bytes, *, content_type: str | None = None) -> Feed:
    """The feed's title and its newest entries, or FeedInvalid."""
    refused = FeedInvalid("The document declares XML entities (a DOCTYPE with ENTITY), which feeds do not use; "
                          "refused unread.")
    if declares_entities(content):
        raise refused
    decoded = decode(content, content_type)
    if declares_entities(decoded):
        raise refused
    decoded = _CHARACTER_REFERENCE.sub(_storable_reference, decoded)
    # Read as the UTF-8 it now is (feedparser's decoding of it changes nothing). No
    # base URL is given: feedparser would rewrite relative guids into links.
    parsed = feedparser.parse(io.BytesIO(decoded), response_headers={"content-type": "application/xml; charset=utf-8"},
                              sanitize_html=False, resolve_relative_uris=False)
    if not parsed.entries:
        if _looks_like_html(content, content_type):
            raise FeedInvalid("The URL answered with an HTML page, not an RSS, Atom or RDF feed.")
        if parsed.bozo:
            raise FeedInvalid(storable(f"The feed could not be parsed: {parsed.get('bozo_exception')}"))
        if not parsed.version:
            raise FeedInvalid("The document is not an RSS, Atom or RDF feed.")
    elif not parsed.version:
        raise FeedInvalid("The document is not an RSS, Atom or RDF feed (it looks like an HTML page).")
    title = plain_text(parsed.feed.get("title"), 500)
    read, unread = _newest(parsed.entries)
    unread_dates = [published for _, published in unread if published]
    return Feed(title=title, entries=[_entry(raw, published) for raw, published in read], unread=len(unread),
                unread_until=max(unread_dates) if unread_dates else None)
