"""Entity declarations are refused in whatever encoding a document comes in: the
check reads the text the XML parser is given, after feedparser has decoded it, so
UTF-16, UTF-32, EBCDIC or a declaration that lies about the encoding hide nothing.
And a feed without entities reads the same in each of those encodings."""
from __future__ import annotations

import codecs
import time

import pytest

from socialpub.rss import parsing

# Five levels: 300,000 characters once expanded, harmless should a case get through,
# and plain to see in a title.
ENTITIES = '<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{level} "{("&lol" + (str(level - 1) if level > 1 else "") + ";") * 10}">' for level in range(1, 6)
)
BODY = ('<rss version="2.0"><channel><title>{title}</title><item><title>{title}</title>'
        "<link>https://example.com/entry</link><guid>entry</guid></item></channel></rss>")


def declaration(encoding: str | None) -> str:
    return f'<?xml version="1.0" encoding="{encoding}"?>' if encoding else ""


def entity_document(encoding: str | None) -> str:
    # The DTD on the line of the XML declaration: feedparser's own clean-up of a
    # DOCTYPE works line by line and leaves this one to the XML parser.
    return f'{declaration(encoding)}<!DOCTYPE r [{ENTITIES}]>' + BODY.format(title="&lol5;")


def plain_document(encoding: str | None) -> str:
    return declaration(encoding) + BODY.format(title="Café crème")


# name: (declared encoding, how the bytes are made, Content-Type)
CASES = {
    "utf-8": ("utf-8", lambda text: text.encode("utf-8"), None),
    "utf-8, BOM": ("utf-8", lambda text: codecs.BOM_UTF8 + text.encode("utf-8"), None),
    "utf-16 le, BOM": ("utf-16", lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"), None),
    "utf-16 be, BOM": ("utf-16", lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"), None),
    "utf-16 le, no BOM": ("utf-16le", lambda text: text.encode("utf-16-le"), None),
    "utf-32 le, BOM": ("utf-32", lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"), None),
    "utf-32 be, BOM": ("utf-32", lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"), None),
    "cp037 (EBCDIC)": ("cp037", lambda text: text.encode("cp037"), None),
    "cp037, text/xml with its charset": ("cp037", lambda text: text.encode("cp037"), "text/xml; charset=cp037"),
    "cp037, charset only in the HTTP header": (None, lambda text: text.encode("cp037"),
                                               "application/rss+xml; charset=cp037"),
    "latin-1": ("iso-8859-1", lambda text: text.encode("latin-1"), None),
    "windows-1252": ("windows-1252", lambda text: text.encode("cp1252"), None),
    "declared utf-8, is cp037": ("utf-8", lambda text: text.encode("cp037"), None),
    "declared latin-1, is utf-16 with BOM": ("iso-8859-1",
                                             lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"), None),
    "HTTP says utf-8, is cp037": ("cp037", lambda text: text.encode("cp037"), "application/xml; charset=utf-8"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_entity_declarations_are_refused_in_every_encoding(case):
    encoding, encode, content_type = CASES[case]
    document = encode(entity_document(encoding))
    started = time.monotonic()
    with pytest.raises(parsing.FeedInvalid, match="declares XML entities"):
        parsing.parse(document, content_type=content_type)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("case", [case for case in CASES if not case.startswith(("declared", "HTTP says"))])
def test_a_feed_reads_the_same_in_every_encoding(case):
    encoding, encode, content_type = CASES[case]
    feed = parsing.parse(encode(plain_document(encoding)), content_type=content_type)
    assert feed.title == "Café crème"
    [entry] = feed.entries
    assert (entry.title, entry.link, entry.guid) == ("Café crème", "https://example.com/entry", "entry")


def test_a_doctype_without_entities_is_still_read_in_ebcdic():
    doctype = ('<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
               '"http://my.netscape.com/publish/formats/rss-0.91.dtd">')
    document = (declaration("cp037") + "\n" + doctype + "\n" + BODY.format(title="Netscape")).encode("cp037")
    feed = parsing.parse(document)
    assert feed.title == "Netscape" and [entry.title for entry in feed.entries] == ["Netscape"]


def test_a_large_ebcdic_document_with_entities_is_refused_at_once():
    items = "".join(f"<item><title>Entry {number}</title><guid>e{number}</guid></item>" for number in range(60_000))
    document = entity_document("cp037").replace("</channel>", items + "</channel>").encode("cp037")
    assert len(document) > 3_000_000
    started = time.monotonic()
    with pytest.raises(parsing.FeedInvalid, match="declares XML entities"):
        parsing.parse(document)
    assert time.monotonic() - started < 2
