"""The placeholder engine (socialpub/placeholders.py): found and checked in one linear
scan, filled in one pass with no gap and no dangling connector, and bounded."""
from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from socialpub import placeholders
from socialpub.errors import ApiError
from socialpub.placeholders import MAX_FILLED_CHARS, check_allowed, check_declared, fill, parse

ROOT = Path(__file__).resolve().parent.parent
SIZE = 63_206  # the longest content a template may have


def declared(*names):
    return [{"name": name} for name in names]


def refused(call, *args, **kwargs) -> ApiError:
    with pytest.raises(ApiError) as error:
        call(*args, **kwargs)
    assert error.value.status == 422 and error.value.code == "validation_error"
    return error.value


# --- finding and checking ---------------------------------------------------------------


def test_names_in_order_of_first_use_with_spaces_allowed():
    assert placeholders.placeholders("{{ a }} {{b}} {{a}}") == ["a", "b"]
    assert parse("x {{a}}y{{ b }}").literals == ("x ", "y", "")


@pytest.mark.parametrize("text", ["{{a-b}}", "{{1a}}", "{{}}", "{{a}} and {{ b c }}", "{{{a}}}", "{{a {{b}}",
                                  "{{" + "a" * 65 + "}}"])
def test_malformed_placeholders_are_refused_naming_the_field(text):
    error = refused(parse, text, field="template")
    assert error.details[0]["field"] == "template" and "not a placeholder" in error.message


@pytest.mark.parametrize("text", ["open {{a", "{{a}} {{", "{{", "a }} {{ b", "{{" + " " * 100])
def test_an_unclosed_placeholder_is_refused(text):
    error = refused(parse, text, field="reply.text")
    assert error.details[0]["field"] == "reply.text" and "never closed" in error.message


def test_a_lone_closing_brace_pair_and_single_braces_are_text():
    assert parse("a }} b { c } {d}").slots == ()
    assert fill("{a} }} {{b}}", {"b": "x"}) == "{a} }} x"


def test_a_long_malformed_placeholder_is_shown_cut():
    error = refused(parse, "{{" + "x " * 500 + "}}")
    assert len(error.message) < 200


def test_declared_and_used_must_agree():
    check_declared("Hi {{a}}", declared("a"))
    with pytest.raises(ApiError, match="does not declare"):
        check_declared("Hi {{a}} {{b}}", declared("a"))
    with pytest.raises(ApiError, match="never uses"):
        check_declared("Hi {{a}}", declared("a", "b"))
    with pytest.raises(ApiError, match="twice"):
        check_declared("Hi {{a}}", declared("a", "a"))
    with pytest.raises(ApiError, match=r"\{\{shop\}\}"):
        check_declared("Hi {{shop}}", declared("shop"), allowed=("author", "platform"))


def test_allowed_names():
    assert check_allowed("{{author}} on {{platform}}", ("author", "platform"), field="f", subject="a reply").names == [
        "author", "platform"]
    error = refused(check_allowed, "{{author}} {{Title}}", ("author",), field="template", subject="a feed template")
    assert "{{Title}}" in error.message and "{{author}}" in error.message
    assert error.details[0]["field"] == "template"


# --- filling ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, values, filled", [
    # values inserted as given
    ("A {{a}} B", {"a": "x"}, "A x B"),
    ("{{a}}{{a}}", {"a": "x"}, "xx"),
    # an empty one goes with the spaces before it
    ("Hi {{a}}, welcome", {"a": None}, "Hi, welcome"),
    ("Hi {{a}}!", {}, "Hi!"),
    ("Hi {{a}}!", {"a": "   "}, "Hi!"),
    # at the start of a line, with the spaces after it
    ("{{a}} Welcome\n  {{a}} again", {"a": ""}, "Welcome\nagain"),
    # the connectors before it: words, in any case, and signs standing alone
    ("{{title}} by {{author}}", {"title": "T"}, "T"),
    ("{{title}} By {{author}}.", {"title": "T"}, "T."),
    ("{{title}} — via {{author}} | {{link}}", {"title": "T", "link": "L"}, "T | L"),
    ("{{title}} - {{author}}: {{link}}", {"title": "T", "link": "L"}, "T: L"),
    ("{{title}}: {{summary}} {{link}}", {"title": "T", "link": "L"}, "T L"),
    ("Thanks @{{author}}!", {}, "Thanks!"),
    ("Made with {{tool}} and {{other}}", {"tool": "glue"}, "Made with glue"),
    # a sign or a word that is part of other text stays
    ("Price: {{price}}", {}, "Price:"),
    ("Read about {{topic}}", {}, "Read about"),
    ("Thanks {{author}}, see you on {{platform}}!", {"platform": "mastodon"}, "Thanks, see you on mastodon!"),
    # only the same line, and never a filled value
    ("Title\nby {{author}}", {}, "Title\n"),
    ("{{a}} by {{b}}", {"a": "made by", "b": None}, "made by"),
    # at the start of a line: the signs after it, not the words
    ("{{author}}: hello", {}, "hello"),
    ("{{author}} - {{title}}", {"title": "T"}, "T"),
    ("{{author}} by the sea", {}, "by the sea"),
    ("x\n{{author}} -fold", {}, "x\n-fold"),
    # everything empty
    ("{{a}} by {{b}}", {}, ""),
])
def test_fill_rule(text, values, filled):
    assert fill(text, values) == filled


def test_values_are_literal_text_in_one_pass():
    assert fill("Hi {{a}}, from {{b}}!", {"a": "{{b}}", "b": "us"}) == "Hi {{b}}, from us!"
    assert fill("{{a}}", {"a": "{{__import__('os')}} {{"}) == "{{__import__('os')}} {{"


# --- the bound -------------------------------------------------------------------------


def test_the_bound_is_the_longest_post_any_platform_takes_and_the_contract_states_it():
    assert MAX_FILLED_CHARS == 63_206
    use = (ROOT / "openapi" / "paths" / "templates.yaml").read_text()
    assert f"{MAX_FILLED_CHARS:,}" in use


def test_a_fill_over_the_bound_is_refused_naming_the_field():
    assert fill("{{a}}", {"a": "x" * MAX_FILLED_CHARS}) == "x" * MAX_FILLED_CHARS
    error = refused(fill, "{{a}}{{a}}", {"a": "x" * (MAX_FILLED_CHARS // 2 + 1)})
    assert error.details[0]["field"] == "variables" and "63,206" in error.message
    assert refused(fill, "{{a}}" * 3, {"a": "xx"}, limit=5, field="content").details[0]["field"] == "content"
    # empty values count nothing
    assert fill("{{a}} {{b}} " * 1000, {"a": "x"}, limit=4000) == " ".join(["x"] * 1000) + " "


def test_the_bound_is_checked_before_anything_is_built():
    text, values = "{{a}}" * 10_000, {"a": "x" * 5000}  # 50 million characters if built
    tracemalloc.start()
    try:
        with pytest.raises(ApiError):
            fill(text, values)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000


# --- linear in the text -----------------------------------------------------------------

PATHOLOGICAL = {
    "opens": "{{" * (SIZE // 2),
    "open then spaces": "{{" + " " * (SIZE - 2),
    "open name repeated": "{{a" * (SIZE // 3),
    "closes": "}}" * (SIZE // 2),
    "open close open": "{{a}}{{" * (SIZE // 7),
    "malformed closed": "{{ a }" * (SIZE // 6) + "}}",
    "mixed": ("{{ {{a }} }} {" * (SIZE // 14)),
    "valid": "{{a}}" * (SIZE // 5),
    "valid spaced": "{{" + " " * 30 + "a" + " " * 30 + "}}" + "x",
    "connectors": "by - " * (SIZE // 5 - 1) + "{{a}}",
    "signs after": "{{a}}" + " -" * (SIZE // 2 - 3),
    "empty slots": "{{a}} " * (SIZE // 6),
}


def _outcome(text: str):
    try:
        return fill(text, {})
    except ApiError as error:
        return error.status


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_a_63_kb_pathological_text_is_answered_at_once(name):
    text = PATHOLOGICAL[name]
    started = time.perf_counter()
    _outcome(text)
    # Linear: milliseconds. The quadratic regex it replaces took over 30 s here; the
    # bound is generous for a loaded machine.
    assert time.perf_counter() - started < 2


def _steps(text: str) -> int:
    """The lines of the engine run to parse and fill `text` (the work `str.find` and
    `str.strip` do in C is linear by construction)."""
    engine = placeholders.__file__
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != engine:
            return None
        if event == "line":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        _outcome(text)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize("shape", ["{{", "{{a", "}}", "{{ a }", "{{a}}", "{{a}} ", "by ", " - ", "{{ {{a }} }} {"])
def test_the_steps_grow_with_the_length_of_the_text_and_no_faster(shape):
    def text(repeats: int) -> str:
        if shape in ("by ", " - "):
            return shape * repeats + "{{a}}" + shape * repeats  # connectors before and signs after an empty one
        return shape * repeats

    small, large = _steps(text(500)), _steps(text(4000))
    assert large <= 8 * small + 100


@pytest.mark.parametrize("text", ["{{" * 20_000, "{{" + " " * 40_000, "{{a" * 20_000, "}}" * 20_000,
                                  "{{ {{a }} }} {" * 5000])
def test_a_refused_or_placeholder_free_text_takes_a_constant_number_of_steps(text):
    assert _steps(text) < 60
