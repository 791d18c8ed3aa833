"""Matching: whole words, ignoring case and accents, phrases in a row, the three
keyword lists, platform and language filters; against a small corpus of the posts
a brand monitor meets."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from socialpub.listening import matching
from socialpub.listening.matching import Matcher


def monitor(keywords=(), required=(), excluded=(), platforms=(), languages=()):
    return SimpleNamespace(id=uuid.uuid4(), keywords=list(keywords), required_keywords=list(required),
                           excluded_keywords=list(excluded), platforms=list(platforms), languages=list(languages))


def matches(text, *monitors, platform="twitter", language=None) -> list:
    return Matcher(monitors).match(text, platform=platform, language=language)


@pytest.mark.parametrize("text, words", [
    ("Hello, World!", ["hello", "world"]),
    ("Crème BRÛLÉE à la carte", ["creme", "brulee", "a", "la", "carte"]),
    ("Straße STRASSE", ["strasse", "strasse"]),
    ("ﬁne ﬂow", ["fine", "flow"]),  # ligatures decompose (NFKD)
    ("Ｆｕｌｌｗｉｄｔｈ ＡＣＭＥ", ["fullwidth", "acme"]),
    ("#Acme @acme acme.com Acme's", ["acme", "acme", "acme", "com", "acme", "s"]),
    ("l'été dernier", ["l", "ete", "dernier"]),
    ("snake_case and v2.0", ["snake_case", "and", "v2", "0"]),
    ("東京タワーに行った", ["東", "京", "タワー", "に", "行", "っ", "た"]),
    ("ΣΊΣΥΦΟΣ", ["σισυφοσ"]),
    ("İstanbul", ["istanbul"]),
    ("!!! ... ???", []),
])
def test_words_are_normalised_and_cut_at_word_boundaries(text, words):
    assert matching.words(text) == words


CORPUS = [
    # (text, keyword, whether it matches)
    ("Just bought an Acme phone", "acme", True),
    ("JUST BOUGHT AN ACME PHONE", "Acme", True),
    ("Loving #acme today", "acme", True),
    ("Follow @Acme for news", "acme", True),
    ("Visit acme.com for deals", "acme", True),
    ("Acme's new phone is here", "acme", True),
    ("Acmes everywhere", "acme", False),
    ("Macmeister", "acme", False),
    ("Le café est fermé", "cafe", True),
    ("Le cafe est ferme", "café", True),
    ("CAFÉ", "Café", True),
    ("Die Straße ist lang", "strasse", True),
    ("social media manager", "social media", True),
    ("Social-Media day!", "social media", True),
    ("social  \n media", "social media", True),
    ("media social", "social media", False),
    ("social networks and media", "social media", False),
    ("antisocial media", "social media", False),
    ("I don't like it", "don't", True),
    ("I don’t like it", "don't", True),
    ("東京タワーに行った", "東京", True),
    ("京東の話", "東京", False),
    ("Привет, АКМЕ!", "акме", True),
]


@pytest.mark.parametrize("text, keyword, expected", CORPUS)
def test_the_corpus(text, keyword, expected):
    wanted = monitor(keywords=[keyword])
    assert matches(text, wanted) == ([wanted.id] if expected else [])


def test_any_of_the_keywords_is_enough():
    wanted = monitor(keywords=["acme", "roadrunner"])
    assert matches("beep beep roadrunner", wanted) == [wanted.id]
    assert matches("coyote", wanted) == []


def test_every_required_keyword_must_appear():
    wanted = monitor(required=["acme", "battery"])
    assert matches("The Acme battery died", wanted) == [wanted.id]
    assert matches("The Acme screen cracked", wanted) == []


def test_keywords_and_required_keywords_together():
    wanted = monitor(keywords=["phone", "tablet"], required=["acme"])
    assert matches("acme phone", wanted) == [wanted.id]
    assert matches("acme laptop", wanted) == []
    assert matches("samsung phone", wanted) == []


def test_an_excluded_keyword_vetoes_the_match():
    wanted = monitor(keywords=["acme"], excluded=["acme anvils", "coyote"])
    assert matches("Acme phones rock", wanted) == [wanted.id]
    assert matches("Acme anvils fall", wanted) == []
    assert matches("acme and the coyote", wanted) == []
    # An excluded keyword alone matches nothing.
    assert matches("coyote", wanted) == []


def test_platforms_and_languages_filter():
    wanted = monitor(keywords=["acme"], platforms=["mastodon", "bluesky"], languages=["en", "fr"])
    assert matches("acme", wanted, platform="mastodon", language="en") == [wanted.id]
    assert matches("acme", wanted, platform="twitter", language="en") == []
    assert matches("acme", wanted, platform="bluesky", language="de") == []
    # A signal without a language matches only a monitor of any language.
    assert matches("acme", wanted, platform="bluesky", language=None) == []
    anywhere = monitor(keywords=["acme"])
    assert matches("acme", anywhere, platform="twitter", language=None) == [anywhere.id]


def test_several_monitors_sharing_keywords():
    first, second, third = monitor(keywords=["acme"]), monitor(keywords=["Acme", "phone"]), monitor(keywords=["tv"])
    assert sorted(matches("new acme phone", first, second, third), key=str) == sorted([first.id, second.id], key=str)
    assert matches("a phone", first, second, third) == [second.id]


def test_a_keyword_with_nothing_to_match_is_never_found():
    assert matching.has_words("!!!") is False and matching.has_words("C3PO") is True
    wanted = monitor(keywords=["!!!"])
    assert matches("wow !!!", wanted) == []


def test_no_monitors_match_nothing():
    assert Matcher([]).match("anything at all", platform="twitter", language="en") == []


def test_matching_is_fast_with_many_monitors():
    # 100 monitors of 50 keywords (half of them phrases): a 280-character text is read
    # once and only the monitors whose keywords it holds are evaluated.
    import time

    monitors = [
        monitor(keywords=[f"brand{m}x{k}" if k % 2 else f"brand{m} product{k}" for k in range(50)],
                excluded=[f"spam{m}"])
        for m in range(100)
    ]
    matcher = Matcher(monitors)
    text = ("brand7 product4 is great, brand9x3 too; " * 8)[:280]
    started = time.perf_counter()
    for _ in range(1000):
        found = matcher.match(text, platform="twitter", language="en")
    elapsed = time.perf_counter() - started
    assert sorted(found, key=str) == sorted([monitors[7].id, monitors[9].id], key=str)
    assert elapsed < 1.0, f"1,000 matches took {elapsed:.2f} s"
