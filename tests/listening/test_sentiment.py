"""Sentiment: VADER's compound score averaged over the sentences, and its label."""
from __future__ import annotations

import pytest

from socialpub.listening import sentiment


@pytest.mark.parametrize("text, sentences", [
    ("One sentence", ["One sentence"]),
    ("I love it!! Really. Meh", ["I love it!!", "Really.", "Meh"]),
    ('He said "great." Then left.', ['He said "great."', "Then left."]),
    ("Visit acme.com now… ok?", ["Visit acme.com now…", "ok?"]),
    ("Pi is 3.14 exactly", ["Pi is 3.14 exactly"]),
    ("first line\nsecond line", ["first line", "second line"]),
    ("素晴らしい。最高！", ["素晴らしい。", "最高！"]),
    ("Great! 😍", ["Great!", "😍"]),
    ("... !!! ?", []),
    ("Ends with spaces.   ", ["Ends with spaces."]),
])
def test_sentences(text, sentences):
    assert sentiment.sentences(text) == sentences


CORPUS = [
    # (text, label)
    ("I love the new Acme phone, the camera is amazing!", "positive"),
    ("Acme support is great :) Thanks for the quick fix!", "positive"),
    ("GREAT!!! 😍", "positive"),
    ("Worst customer service ever. Never buying from Acme again :(", "negative"),
    ("The battery is terrible and the screen cracked.", "negative"),
    ("I am not happy with Acme.", "negative"),
    ("Acme releases its quarterly report today.", "neutral"),
    ("The store opens at 9am.", "neutral"),
    ("The phone is not bad at all.", "positive"),
]


@pytest.mark.parametrize("text, label", CORPUS)
def test_the_corpus(text, label):
    assert sentiment.score(text).label == label


def test_the_score_is_the_mean_of_the_sentences_compound_scores():
    scorer = sentiment.analyser().polarity_scores
    parts = ["I love Acme!", "The battery is terrible though."]
    expected = round((scorer(parts[0])["compound"] + scorer(parts[1])["compound"]) / 2, 4)
    assert sentiment.score(" ".join(parts)).score == expected
    # Scored whole, the text would read otherwise: the sentences are what is averaged.
    assert round(scorer(" ".join(parts))["compound"], 4) != expected


@pytest.mark.parametrize("score, label", [
    (0.05, "positive"), (0.0499, "neutral"), (0.0, "neutral"), (-0.0499, "neutral"), (-0.05, "negative"),
    (1.0, "positive"), (-1.0, "negative"),
])
def test_labels_at_the_thresholds(score, label):
    assert sentiment.label_of(score) == label


def test_a_text_without_words_is_neutral_zero():
    assert sentiment.score("... ???") == sentiment.Sentiment(0.0, "neutral")


def test_scores_stay_within_bounds_and_are_rounded():
    for text, _ in CORPUS:
        scored = sentiment.score(text)
        assert -1 <= scored.score <= 1 and round(scored.score, 4) == scored.score
