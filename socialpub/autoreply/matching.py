"""Whether a rule matches a message, and why: the one evaluation the `test` operation
and the notifications poll share.

Keywords match ignoring case. Patterns run on google-re2, whose matching time is
linear in the text, so no pattern a workspace saves can stall the service; compiled
patterns are kept (by their text), so evaluating many rules compiles nothing twice."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import re2

from persistence.autoreply import AutoReplyRule, FrequencyMode, MatchMode
from socialpub.errors import ApiError

_OPTIONS = re2.Options()
# A refused pattern is answered with 422; it is not worth a log line.
_OPTIONS.log_errors = False
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Sample:
    text: str
    platform: str
    message_type: str
    author: str | None = None


@dataclass(frozen=True)
class Verdict:
    matched: bool
    reason: str


def compile_pattern(pattern: str):
    """The RE2 program for `pattern`; 422 naming `trigger.pattern` when RE2 refuses it."""
    try:
        return _compiled(pattern)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ApiError.field_invalid("trigger.pattern", f"RE2 cannot compile the pattern: {detail}") from None


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str):
    return re2.compile(pattern, options=_OPTIONS)


@functools.lru_cache(maxsize=8192)
def _whole_word(keyword: str) -> re.Pattern:
    # An escaped literal between word boundaries: linear, whatever the keyword.
    return re.compile(r"(?<!\w)" + re.escape(keyword) + r"(?!\w)")


MATCHING_COLUMNS = (
    AutoReplyRule.id, AutoReplyRule.platforms, AutoReplyRule.message_types, AutoReplyRule.trigger,
    AutoReplyRule.frequency_mode, AutoReplyRule.frequency_window_hours,
)


def normalise(text: str) -> str:
    return _SPACES.sub(" ", text.casefold()).strip()


class CompiledRule:
    """A rule read once for evaluating many messages (or one message against many
    rules). Built from a rule, or from a row of its matching columns (MATCHING_COLUMNS),
    which is all a test against every enabled rule needs to read."""

    __slots__ = ("id", "platforms", "message_types", "keywords", "match", "exclude", "pattern",
                 "frequency_mode", "window_hours")

    def __init__(self, rule: AutoReplyRule):
        trigger = rule.trigger or {}
        self.id = rule.id
        self.platforms = frozenset(rule.platforms or ())
        self.message_types = frozenset(rule.message_types or ())
        self.keywords = [normalise(keyword) for keyword in trigger.get("keywords") or []]
        self.match = trigger.get("match") or MatchMode.ANY
        self.exclude = [normalise(keyword) for keyword in trigger.get("exclude_keywords") or []]
        self.pattern = _compiled(trigger["pattern"]) if trigger.get("pattern") else None
        self.frequency_mode = rule.frequency_mode
        self.window_hours = rule.frequency_window_hours

    def evaluate(self, sample: Sample, text: str | None = None, *, answered_authors: frozenset = frozenset()) -> Verdict:
        """`text` is `normalise(sample.text)`, given when many rules read one sample.
        `answered_authors`: the authors this rule already answered within its window."""
        if self.platforms and sample.platform not in self.platforms:
            return Verdict(False, f"the rule does not answer on {sample.platform}")
        if self.message_types and sample.message_type not in self.message_types:
            return Verdict(False, f"the rule does not answer a {sample.message_type}")
        text = normalise(sample.text) if text is None else text
        for keyword in self.exclude:
            if keyword in text:
                return Verdict(False, f"the excluded keyword '{keyword}' is in the text")
        reasons = []
        if self.keywords:
            verdict = self._keywords(text)
            if not verdict.matched:
                return verdict
            reasons.append(verdict.reason)
        if self.pattern is not None:
            if self.pattern.search(sample.text) is None:
                return Verdict(False, "the pattern does not match the text")
            reasons.append("the pattern matches")
        if (self.frequency_mode == FrequencyMode.ONCE_PER_AUTHOR and sample.author
                and sample.author in answered_authors):
            return Verdict(False, f"the rule already answered {sample.author} within {self.window_hours} hours")
        return Verdict(True, " and ".join(reasons))

    def _keywords(self, text: str) -> Verdict:
        if self.match == MatchMode.ALL:
            for keyword in self.keywords:
                if keyword not in text:
                    return Verdict(False, f"the keyword '{keyword}' is not in the text (all are needed)")
            return Verdict(True, "every keyword is in the text")
        if self.match == MatchMode.EXACT:
            for keyword in self.keywords:
                if text == keyword:
                    return Verdict(True, f"the text is exactly '{keyword}'")
            return Verdict(False, "the text is not exactly one of the keywords")
        if self.match == MatchMode.WHOLE_WORD:
            for keyword in self.keywords:
                if _whole_word(keyword).search(text):
                    return Verdict(True, f"the word '{keyword}' is in the text")
            return Verdict(False, "none of the keywords is in the text as a whole word")
        for keyword in self.keywords:
            if keyword in text:
                return Verdict(True, f"the keyword '{keyword}' is in the text")
        return Verdict(False, "none of the keywords is in the text")
