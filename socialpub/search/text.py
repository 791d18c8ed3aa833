"""How search reads text: folding (case, accents and compatibility forms dropped, as
the databases' own folding does: unaccent on PostgreSQL, FTS5's remove_diacritics on
SQLite), the words of a text (its vocabulary), the edit distance typo tolerance
allows, and the snippet shown for a match: the document's text escaped, the matches
marked with `<mark>` and nothing else of the user's text read as HTML."""
from __future__ import annotations

import html
import re
import unicodedata

# What the databases' highlighters put around a match: characters of the private use
# area, which documents never carry (`clean` drops them), so a document's own text
# can never open or close a mark.
START, STOP = "\ue000", "\ue001"
_MARKERS = re.compile(f"[{START}{STOP}]")
_NEIGHBOURS = re.compile(f"{STOP}(\\s+){START}")
_WORDS = re.compile(r"[^\W_]+")
_ORIGINAL_WORDS = _WORDS
_MARKED_WORDS = re.compile(f"{START}|{STOP}|[^\\W_]+")
MAX_TERM_CHARS = 60
SNIPPET_CHARS = 160


def fold(text: str) -> str:
    """`text` as search compares it: NFKD without combining marks, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def clean(text: str | None) -> str:
    """A document's text as it is stored: without the highlighters' markers."""
    return _MARKERS.sub("", text or "")


def words(text: str) -> list[str]:
    """The words of `text`, folded, in order (letters and digits; others separate)."""
    return _WORDS.findall(fold(text))


def indexed(text: str) -> str:
    """The words of `text` as written (not folded), one space apart: what the
    PostgreSQL vector of a document is made from (socialpub.search.documents.VECTOR_SQL;
    its configurations fold them as `fold` does)."""
    return " ".join(_WORDS.findall(text))


def is_word(text: str) -> bool:
    """Whether `text` is one word as `words` splits them."""
    return _WORDS.fullmatch(text) is not None


def vocabulary(*texts: str) -> set[str]:
    """The distinct words of a document, as typo tolerance knows them."""
    return {word for text in texts for word in words(text) if 2 <= len(word) <= MAX_TERM_CHARS}


def allowed_typos(word: str) -> int:
    """Meilisearch's rule: no typo under 5 letters, one from 5, two from 9."""
    if len(word) >= 9:
        return 2
    return 1 if len(word) >= 5 else 0


def distance(a: str, b: str, most: int) -> int:
    """The optimal string alignment distance of `a` and `b` (an insertion, deletion,
    substitution or swap of two neighbours is one typo), or `most + 1` once it is
    known to be more than `most`."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > most:
            return most + 1
        previous2, previous = previous, current
    return previous[-1]


def snippet(highlighted: str, *, chars: int = SNIPPET_CHARS) -> str:
    """The part of a highlighted text (matches between START and STOP) around its
    first match, at most about `chars` characters, escaped, marks as `<mark>`."""
    text = " ".join(highlighted.split())
    first = text.find(START)
    if len(text) > chars:
        begin = 0 if first < chars // 3 else text.rfind(" ", 0, first - chars // 3) + 1
        end = text.find(" ", begin + chars)
        cut = text[begin: end if end != -1 else len(text)]
        text = ("… " if begin else "") + _balanced(cut) + (" …" if end != -1 else "")
    # Neighbouring matches are one mark, whichever way the database marked them.
    text = _NEIGHBOURS.sub(r"\1", text)
    escaped = html.escape(text, quote=False)
    return escaped.replace(START, "<mark>").replace(STOP, "</mark>")


def _balanced(text: str) -> str:
    """A cut that starts inside a mark gets its opening, one that ends inside gets its closing."""
    first_stop, first_start = text.find(STOP), text.find(START)
    if first_stop != -1 and (first_start == -1 or first_stop < first_start):
        text = START + text
    if text.rfind(START) > text.rfind(STOP):
        text += STOP
    return text


def _marked(headline: str | None) -> list[bool]:
    """Which words of a highlighted text of words are marked."""
    marks, inside = [], False
    for found in _MARKED_WORDS.finditer(headline or ""):
        token = found.group()
        if token in (START, STOP):
            inside = token == START
        else:
            marks.append(inside)
    return marks


def mark_words(original: str, *headlines: str | None) -> str:
    """`original` with the words marked that any of `headlines` (highlighted copies
    of its words alone, one space apart) marks; unmarked when they do not agree on
    its words."""
    spans = [found.span() for found in _ORIGINAL_WORDS.finditer(original)]
    marked = [False] * len(spans)
    for headline in headlines:
        marks = _marked(headline)
        if len(marks) == len(spans):
            marked = [a or b for a, b in zip(marked, marks)]
    pieces, at = [], 0
    for (begin, end), mark in zip(spans, marked):
        if mark:
            pieces += [original[at:begin], START, original[begin:end], STOP]
            at = end
    return "".join(pieces) + original[at:]
