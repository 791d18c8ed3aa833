"""The brand's rules: banned words as whole words, ignoring case and accents, and
drafts within their platform's limit."""
from __future__ import annotations

import pytest

from socialpub.ai.rules import Draft, banned_words_in, violations, without_banned_words


class TestBannedWords:
    @pytest.mark.parametrize("text", [
        "This is CHEAP.", "cheap!", "so Cheap, so good", "(cheap)", "chéap coffee", "ÇHEAP",
    ])
    def test_a_banned_word_is_found_whatever_its_case_or_accents(self, text):
        assert banned_words_in(text, ["cheap"]) == ["cheap"]

    @pytest.mark.parametrize("text", ["cheaper beans", "a cheapskate", "cheap_ish", "wholesale", "cheapcheap"])
    def test_only_whole_words_count(self, text):
        assert banned_words_in(text, ["cheap", "sale"]) == []

    def test_an_accented_banned_word_bans_the_plain_spelling(self):
        assert banned_words_in("Try our cafe au lait today", ["Café au lait"]) == ["Café au lait"]
        assert banned_words_in("CAFÉ AU-LAIT", ["cafe au lait"]) == ["cafe au lait"]

    def test_a_phrase_matches_its_words_in_order_only(self):
        assert banned_words_in("A limited\n time offer", ["limited time"]) == ["limited time"]
        assert banned_words_in("time is limited", ["limited time"]) == []

    def test_every_banned_word_found_is_named_in_the_order_saved(self):
        assert banned_words_in("Synergy makes it cheap", ["cheap", "free", "synergy"]) == ["cheap", "synergy"]

    def test_blank_banned_words_ban_nothing(self):
        assert banned_words_in("anything at all", ["", "  ", "!!"]) == []

    def test_taking_banned_words_out_keeps_the_rest(self):
        assert without_banned_words("Our cheap, tasty latte", ["cheap"]) == "Our, tasty latte"
        assert without_banned_words("A limited time offer on beans", ["limited time"]) == "A offer on beans"
        assert without_banned_words("Nothing to remove", ["cheap"]) == "Nothing to remove"
        assert without_banned_words("Chéap beans", ["cheap"]) == "beans"


class TestViolations:
    def test_a_clean_reply_breaks_nothing(self):
        assert violations("Fine words", [Draft("twitter", "A fine tweet")], ["cheap"]) == []

    def test_banned_words_in_the_message_and_drafts_are_each_named(self):
        found = violations("So cheap", [Draft("twitter", "ok"), Draft("linkedin", "Synergy!")], ["cheap", "synergy"])
        assert [(v.field, v.message) for v in found] == [
            ("message.content", "The reply uses the banned word 'cheap'."),
            ("drafts[1].content", "The linkedin draft uses the banned word 'synergy'."),
        ]

    def test_a_draft_over_its_platform_limit_is_named_with_its_length(self):
        found = violations("ok", [Draft("twitter", "x" * 281), Draft("linkedin", "x" * 281)], [])
        assert [(v.field, v.message) for v in found] == [
            ("drafts[0].content", "The twitter draft is 281 weighted characters; twitter allows at most 280."),
        ]

    def test_telegram_counts_utf16_units(self):
        assert violations("ok", [Draft("telegram", "😀" * 2048)], []) == []
        found = violations("ok", [Draft("telegram", "😀" * 2049)], [])
        assert found[0].message == "The telegram draft is 4098 UTF-16 code units; telegram allows at most 4096."

    def test_unknown_platforms_and_empty_drafts_break_the_rules(self):
        found = violations("ok", [Draft("myspace", "hi"), Draft("twitter", "  ")], [])
        assert [v.field for v in found] == ["drafts[0].platform", "drafts[1].content"]
