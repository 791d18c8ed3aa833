"""The words a report names as its top keywords: what the signals talk about besides
what the monitor listens for.

A signal's terms are its words as matching reads them (`matching.words`: case and
accents folded, cut at anything that is not a letter, a digit or `_`), each counted
once per signal, leaving out web addresses, words under three characters, numbers,
English stop words (and the leftovers of contractions) and the words of the
monitor's own keywords, which every signal of the monitor holds.
"""
from __future__ import annotations

import re
from collections import Counter

from socialpub.listening import matching

MIN_LENGTH = 3

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each even ever every few
for from further get gets got had hadn has hasn have haven having he her here hers herself him himself his how
however i if in into is isn it its itself just let like ll made make many may me might more most much must my
myself need no nor not now of off on once one only or other ought our ours ourselves out over own re really same
say says said shall she should shouldn so some still such than that the their theirs them themselves then there
these they this those through to too under until up upon us ve very via was wasn we were weren what when where
which while who whom why will with won would wouldn yet you your yours yourself yourselves
amp http https www com org net html rt
""".split())
_NUMBER = re.compile(r"^[\d_]+$")
_WEB_ADDRESS = re.compile(r"(?i)\b(?:https?://|www\.)\S+")


def excluded_words(*keyword_lists) -> frozenset[str]:
    """The words of a monitor's keywords (any list), as `words` reads them."""
    return frozenset(word for keywords in keyword_lists for keyword in keywords or () for word in matching.words(keyword))


def terms_of(text: str, excluded: frozenset[str] = frozenset()) -> set[str]:
    """The distinct terms of one text."""
    return {
        word for word in matching.words(_WEB_ADDRESS.sub(" ", text))
        if len(word) >= MIN_LENGTH and word not in STOP_WORDS and word not in excluded and not _NUMBER.match(word)
    }


class TermCounter:
    """How many texts hold each term; `top(n)` the n most frequent, ties by term."""

    def __init__(self, excluded: frozenset[str] = frozenset()):
        self.excluded = excluded
        self.counts: Counter = Counter()

    def add(self, text: str) -> None:
        self.counts.update(terms_of(text, self.excluded))

    def top(self, n: int) -> list[tuple[str, int]]:
        return sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))[:n]
