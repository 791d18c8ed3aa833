"""Which monitors a signal matches: whole words, ignoring case and accents.

A text and a keyword are read alike (`words`): decomposed (NFKD, so `ﬁ` is `fi` and
`é` is `e` with an accent), stripped of combining marks (the accents), case-folded
(`ß` is `ss`), then cut into words at Unicode word boundaries: a word is a run of
letters, digits and connector punctuation (`_`); every other character separates
words, so `acme` is found in `#acme`, `@acme`, `acme.com` and `Acme's`, and `ete` in
`l'été` (an apostrophe separates too, unlike Unicode's default rules: a keyword
`don't` is the phrase `don t`, found in "don't" and "don’t" alike). Han ideographs
and Hiragana, written without spaces, are each a word of their own, so a keyword in
those scripts matches as the phrase of its characters; other scripts written without
spaces (Thai, Khmer) match only whole runs between spaces.

A keyword matches when its words appear in the text consecutively, as a phrase
(`social media` is in "Social-media day!", not in "media social"). A monitor matches
a signal when any of its `keywords` does (or it has none), every one of its
`required_keywords` does and none of its `excluded_keywords` does, and the signal's
platform is among its `platforms` and its language among its `languages` (an empty
list is any; a signal without a language matches only monitors of any language).

Speed: a `Matcher` compiles the enabled monitors of a workspace's mode once (an
ingest keeps it in its scope, `TenantScope.remember`); a signal's text is normalised
and cut into words once, single-word keywords are looked up in a dict by word, a
phrase is searched only when its first word is in the text, and only the monitors one
of whose keywords was found are evaluated.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from persistence.listening import ListeningMonitor

_WORD = re.compile(r"\w+")
# Han (with its extensions and compatibility ideographs) and Hiragana: one word a character.
_IDEOGRAPHIC = "\u3005\u3007\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_SPLIT = re.compile(rf"[{_IDEOGRAPHIC}]|[^{_IDEOGRAPHIC}]+")
_HAS_IDEOGRAPHIC = re.compile(rf"[{_IDEOGRAPHIC}]")


def normalise(text: str) -> str:
    """`text` decomposed, without combining marks, case-folded."""
    if text.isascii():
        return text.lower()
    folded = _strip_marks(unicodedata.normalize("NFKD", text)).casefold()
    if not folded.isascii():
        # Case folding can leave what decomposes again (a folded ligature).
        folded = _strip_marks(unicodedata.normalize("NFKD", folded))
    return folded


def _strip_marks(text: str) -> str:
    return "".join(char for char in text if not unicodedata.combining(char))


def words(text: str) -> list[str]:
    """The words of `text`, normalised, in order."""
    normalised = normalise(text)
    found = _WORD.findall(normalised)
    if normalised.isascii() or not _HAS_IDEOGRAPHIC.search(normalised):
        return found
    split = []
    for word in found:
        if _HAS_IDEOGRAPHIC.search(word):
            split.extend(_SPLIT.findall(word))
        else:
            split.append(word)
    return split


def has_words(keyword: str) -> bool:
    """Whether `keyword` can match anything: it has a letter or a digit once normalised."""
    return bool(words(keyword))


@dataclass(frozen=True)
class _Monitor:
    id: object
    platforms: frozenset
    languages: frozenset
    any_of: frozenset
    all_of: frozenset
    none_of: frozenset


class Matcher:
    """The enabled monitors of one workspace's mode, compiled for matching many texts."""

    def __init__(self, monitors):
        self._index: dict[tuple[str, ...], int] = {}
        # A single word -> its keyword; a phrase's first word -> [(" w1 w2 ", keyword)].
        self._single: dict[str, int] = {}
        self._phrases: dict[str, list[tuple[str, int]]] = {}
        # A keyword -> the monitors that want it (any of, or all of).
        self._wanted_by: dict[int, list[_Monitor]] = {}
        self.monitors: list[_Monitor] = []
        for monitor in monitors:
            compiled = _Monitor(
                id=monitor.id,
                platforms=frozenset(monitor.platforms or ()),
                languages=frozenset(monitor.languages or ()),
                any_of=self._keywords(monitor.keywords),
                all_of=self._keywords(monitor.required_keywords),
                none_of=self._keywords(monitor.excluded_keywords),
            )
            self.monitors.append(compiled)
            for keyword in compiled.any_of | compiled.all_of:
                self._wanted_by.setdefault(keyword, []).append(compiled)

    def _keywords(self, keywords) -> frozenset:
        found = set()
        for keyword in keywords or ():
            phrase = tuple(words(keyword))
            if not phrase:
                continue  # refused when the monitor is saved; never matches
            index = self._index.get(phrase)
            if index is None:
                index = self._index[phrase] = len(self._index)
                if len(phrase) == 1:
                    self._single[phrase[0]] = index
                else:
                    self._phrases.setdefault(phrase[0], []).append((" " + " ".join(phrase) + " ", index))
            found.add(index)
        return frozenset(found)

    def found(self, text_words: list[str]) -> set[int]:
        """The keywords (by index) that `text_words` holds."""
        found = set()
        joined = None
        single, phrases = self._single, self._phrases
        for word in set(text_words):
            index = single.get(word)
            if index is not None:
                found.add(index)
            candidates = phrases.get(word)
            if candidates:
                if joined is None:
                    joined = " " + " ".join(text_words) + " "
                for phrase, index in candidates:
                    if phrase in joined:
                        found.add(index)
        return found

    def match(self, text: str, *, platform: str, language: str | None) -> list:
        """The ids of the monitors that a text posted on `platform` in `language` matches."""
        if not self._wanted_by:
            return []
        found = self.found(words(text))
        if not found:
            return []
        candidates = {}
        for index in found:
            for monitor in self._wanted_by.get(index, ()):
                candidates[id(monitor)] = monitor
        matched = []
        for monitor in candidates.values():
            if monitor.platforms and platform not in monitor.platforms:
                continue
            if monitor.languages and language not in monitor.languages:
                continue
            if monitor.any_of and not monitor.any_of & found:
                continue
            if not monitor.all_of <= found or monitor.none_of & found:
                continue
            matched.append(monitor.id)
        return sorted(matched, key=str)


def enabled_monitors(scope) -> Matcher:
    """The scope's enabled monitors, compiled once per scope (one ingest)."""
    def compile_them() -> Matcher:
        query = scope.select(ListeningMonitor, ListeningMonitor.enabled.is_(True))
        return Matcher(scope.session.execute(query).scalars())

    return scope.remember("listening.matcher", compile_them)
