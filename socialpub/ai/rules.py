"""The brand's rules every assistant reply obeys, whoever wrote it (a model or the
built-in composer): no banned word, and every draft within its platform's limit.

Banned words match whole words, ignoring case and accents: "cafe" bans "Café" and
"CAFÉS" does not match "cafe" (another word), and "sale" does not ban "wholesale".
A banned phrase ("limited time") matches its words in order, whatever spacing or
punctuation separates them.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from socialpub.platforms import CONTENT_LIMITS, content_length, length_unit

WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Case- and accent-free: the form banned words are compared in."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def _words(text: str) -> list[str]:
    return WORD.findall(fold(text))


def _phrases(banned_words) -> list[tuple[str, tuple[str, ...]]]:
    phrases = []
    for banned in banned_words:
        words = tuple(_words(banned))
        if words:
            phrases.append((banned, words))
    return phrases


def _matches(words: list[str], phrase: tuple[str, ...]) -> list[int]:
    size = len(phrase)
    return [start for start in range(len(words) - size + 1) if tuple(words[start:start + size]) == phrase]


def banned_words_in(text: str, banned_words) -> list[str]:
    """The banned words (as the brand saved them) that `text` contains, in the order saved."""
    words = _words(text)
    return [banned for banned, phrase in _phrases(banned_words) if _matches(words, phrase)]


def without_banned_words(text: str, banned_words) -> str:
    """`text` with every banned word or phrase taken out, for the composer's own
    inputs (a topic or a sample post may carry one)."""
    phrases = _phrases(banned_words)
    if not phrases:
        return text
    tokens = re.split(r"(\w+)", text)
    # Odd indexes are words; a phrase spans words at consecutive odd indexes.
    word_positions = list(range(1, len(tokens), 2))
    folded = [fold(tokens[position]) for position in word_positions]
    dropped: set[int] = set()
    for _, phrase in phrases:
        for start in _matches(folded, phrase):
            dropped.update(word_positions[start:start + len(phrase)])
    if not dropped:
        return text
    kept = "".join("" if index in dropped else token for index, token in enumerate(tokens))
    kept = re.sub(r"[ \t]{2,}", " ", kept)
    return re.sub(r" +([,.;:!?])", r"\1", kept).strip()


@dataclass(frozen=True)
class Draft:
    platform: str
    content: str


@dataclass(frozen=True)
class Violation:
    """One broken rule, phrased for the refusal and for the model's second attempt."""

    field: str
    message: str


def violations(content: str, drafts: list[Draft], banned_words) -> list[Violation]:
    found = []
    for banned in banned_words_in(content, banned_words):
        found.append(Violation("message.content", f"The reply uses the banned word {banned!r}."))
    for index, draft in enumerate(drafts):
        for banned in banned_words_in(draft.content, banned_words):
            found.append(Violation(f"drafts[{index}].content", f"The {draft.platform} draft uses the banned word {banned!r}."))
        limit = CONTENT_LIMITS.get(draft.platform)
        if limit is None:
            found.append(Violation(f"drafts[{index}].platform", f"{draft.platform!r} is not a platform we publish to."))
            continue
        length = content_length(draft.content, draft.platform)
        if length > limit:
            found.append(Violation(
                f"drafts[{index}].content",
                f"The {draft.platform} draft is {length} {length_unit(draft.platform)}; {draft.platform} allows at most {limit}.",
            ))
        if not draft.content.strip():
            found.append(Violation(f"drafts[{index}].content", f"The {draft.platform} draft is empty."))
    return found
