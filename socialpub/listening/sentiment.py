"""A signal's sentiment, computed once on ingest with VADER (vaderSentiment), the
lexicon- and rule-based analyser tuned for social media text (emoji, capitals,
"!!!", negations, "but").

The content is split into sentences (`sentences`): after each run of `.`, `!`, `?`
or `…` that a space, a line break or the end follows (closing quotes and brackets
stay with their sentence), after each run of the full-width `。`, `！`, `？` (which
need no space), and at every line break. A sentence of nothing but punctuation and
spaces is left out. The score is the mean of VADER's compound score (-1 to 1) of each
sentence, rounded to 4 decimals (0 for a text with no sentence left); the label is
`positive` at 0.05 or more, `negative` at -0.05 or less, else `neutral` (VADER's own
thresholds), read from the rounded score so that the two always agree.

Abbreviations are not told from the end of a sentence ("Dr. Smith" is two): for
VADER, which scores a sentence by its words and their neighbours, that is harmless.
VADER reads English; other languages score mostly neutral, apart from emoji.
"""
from __future__ import annotations

import re
import threading
import unicodedata

from persistence.listening import Sentiment, SentimentLabel

POSITIVE_AT = 0.05
NEGATIVE_AT = -0.05
_CLOSERS = "\"'”’)\\]」』»"
_BOUNDARY = re.compile(
    rf"[.!?…]+[{_CLOSERS}]*(?=\s|$)"  # a Latin-style end: a space or the end must follow
    rf"|[。！？]+[{_CLOSERS}]*"  # a full-width end needs no space
    r"|\n"
)
_analyser = None
_loading = threading.Lock()


def analyser():
    """VADER's analyser, its lexicons read once per process (it keeps no state
    between calls, so threads share it)."""
    global _analyser
    if _analyser is None:
        with _loading:
            if _analyser is None:
                from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

                _analyser = SentimentIntensityAnalyzer()
    return _analyser


def sentences(text: str) -> list[str]:
    """The sentences of `text` as scored, each with its closing punctuation."""
    found, start = [], 0
    for boundary in _BOUNDARY.finditer(text):
        found.append(text[start:boundary.end()])
        start = boundary.end()
    found.append(text[start:])
    return [sentence.strip() for sentence in found if _has_words(sentence)]


def _has_words(sentence: str) -> bool:
    for char in sentence:
        if not char.isspace() and not unicodedata.category(char).startswith("P"):
            return True
    return False


def label_of(score: float) -> str:
    if score >= POSITIVE_AT:
        return SentimentLabel.POSITIVE.value
    if score <= NEGATIVE_AT:
        return SentimentLabel.NEGATIVE.value
    return SentimentLabel.NEUTRAL.value


def score(text: str) -> Sentiment:
    """The sentiment of `text`: the mean compound score of its sentences and its label."""
    scorer = analyser().polarity_scores
    parts = sentences(text)
    if not parts:
        return Sentiment(0.0, SentimentLabel.NEUTRAL.value)
    mean = round(sum(scorer(part)["compound"] for part in parts) / len(parts), 4)
    mean = 0.0 if mean == 0 else mean  # never -0.0
    return Sentiment(mean, label_of(mean))
