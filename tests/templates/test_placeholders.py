"""Placeholders: found and checked on save, filled in one pass with no gaps left."""
from __future__ import annotations

import pytest

from socialpub.errors import ApiError
from socialpub.templates.placeholders import check_declared, fill, placeholders


def declared(*names):
    return [{"name": name} for name in names]


def test_names_in_order_of_first_use_with_spaces_allowed():
    assert placeholders("{{ a }} {{b}} {{a}}") == ["a", "b"]


@pytest.mark.parametrize("text", ["{{a-b}}", "{{1a}}", "{{}}", "open {{a", "{{a}} and {{ b c }}"])
def test_malformed_placeholders_are_refused(text):
    with pytest.raises(ApiError) as refused:
        placeholders(text)
    assert refused.value.status == 422


def test_declared_and_used_must_agree():
    check_declared("Hi {{a}}", declared("a"))
    with pytest.raises(ApiError, match="does not declare"):
        check_declared("Hi {{a}} {{b}}", declared("a"))
    with pytest.raises(ApiError, match="never uses"):
        check_declared("Hi {{a}}", declared("a", "b"))
    with pytest.raises(ApiError, match="twice"):
        check_declared("Hi {{a}}", declared("a", "a"))
    with pytest.raises(ApiError, match="only"):
        check_declared("Hi {{shop}}", declared("shop"), allowed=("author", "platform"))


def test_fill_is_one_pass_and_leaves_no_gap():
    assert fill("Hi {{a}}, from {{b}}!", {"a": "{{b}}", "b": "us"}) == "Hi {{b}}, from us!"
    assert fill("Hi {{a}}, welcome", {"a": None}) == "Hi, welcome"
    assert fill("{{a}} Welcome\n  {{a}} again", {"a": ""}) == "Welcome\nagain"
    assert fill("A {{a}} B", {"a": "x"}) == "A x B"
