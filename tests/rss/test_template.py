"""Templates: the placeholders allowed, and posts fitted within the platforms' limits."""
from __future__ import annotations

import pytest

from socialpub import platforms
from socialpub.errors import ApiError
from socialpub.rss import template

LINK = "https://example.com/2026/11/autumn"


@pytest.mark.parametrize("text, unknown", [("{{title}} {{url}}", "{{url}}"), ("{{ Title }}", "{{Title}}"),
                                           ("{{}}", "{{}}")])
def test_an_unknown_placeholder_is_named(text, unknown):
    with pytest.raises(ApiError) as refused:
        template.check_template(text)
    assert refused.value.status == 422 and unknown in refused.value.message
    assert refused.value.details[0]["field"] == "template"


def test_the_default_and_spaced_placeholders():
    assert template.check_template(None) == "{{title}} {{link}}"
    # An empty author takes its connector with it: no dangling " - ".
    assert template.render("{{ title }} - {{author}}: {{link}}", {"title": "T", "link": LINK, "author": None}) == (
        f"T: {LINK}")


@pytest.mark.parametrize("text", ["{{title}} {{link", "{{title}} {{", "{{" + " " * 1998, "{{title}} {{ link }"])
def test_an_unclosed_or_malformed_placeholder_is_422(text):
    with pytest.raises(ApiError) as refused:
        template.check_template(text)
    assert refused.value.status == 422 and refused.value.details[0]["field"] == "template"


@pytest.mark.parametrize("text, values, content", [
    ("{{title}} by {{author}}", {"title": "T", "author": None}, "T"),
    ("{{title}} by {{author}}", {"title": "T", "author": "Ana"}, "T by Ana"),
    ("{{title}} via {{author}} {{link}}", {"title": "T", "link": LINK}, f"T {LINK}"),
    ("{{author}}: {{title}} | {{link}}", {"title": "T", "link": LINK, "author": ""}, f"T | {LINK}"),
    ("{{title}}\nby {{author}}\n{{link}}", {"title": "T", "link": LINK}, f"T\n\n{LINK}"),
])
def test_an_empty_value_leaves_no_gap_and_no_dangling_word(text, values, content):
    assert template.render(text, values) == content


def test_a_link_too_long_for_any_platform_is_refused_before_it_is_built():
    values = {"title": "T", "link": "https://example.com/" + "a" * 1980, "summary": None, "author": None}
    with pytest.raises(ApiError) as refused:
        template.fit("{{link}}" * 250, values, ["facebook"])
    assert refused.value.status == 422 and refused.value.details[0]["field"] == "content"


def test_a_summary_used_many_times_is_cut_to_fit():
    values = {"title": "T", "link": LINK, "summary": "word " * 2000, "author": None}
    content = template.fit("{{summary}} " * 150 + "{{link}}", values, ["facebook"])
    assert content.endswith(LINK) and platforms.content_length(content, "facebook") <= 63206


def test_what_fits_is_left_alone():
    values = {"title": "Short", "link": LINK, "summary": "Also short", "author": "Ana"}
    assert template.fit("{{title}} {{summary}} {{link}}", values, ["twitter"]) == f"Short Also short {LINK}"


@pytest.mark.parametrize("platform", ["twitter", "bluesky", "telegram"])
def test_the_summary_is_cut_first_and_the_link_kept(platform):
    values = {"title": "Title", "link": LINK, "summary": "😀 emoji and words " * 400, "author": None}
    content = template.fit("{{title}}: {{summary}} {{link}}", values, [platform])
    assert content.endswith(f"… {LINK}") and content.startswith("Title: 😀")
    assert platforms.content_length(content, platform) <= platforms.CONTENT_LIMITS[platform]
    # As much of the summary as fits: a character more (2 UTF-16 units for an emoji
    # on telegram, and the space a cut drops) would not.
    assert platforms.content_length(content, platform) >= platforms.CONTENT_LIMITS[platform] - 3


def test_the_title_is_cut_when_the_summary_is_not_enough():
    values = {"title": "A very long title " * 30, "link": LINK, "summary": "Summary " * 10, "author": None}
    content = template.fit("{{title}} {{summary}} {{link}}", values, ["twitter"])
    assert content.endswith(LINK) and content.startswith("A very long title")
    assert platforms.content_length(content, "twitter") <= 280


def test_a_template_too_long_without_any_item_text_is_422():
    with pytest.raises(ApiError) as refused:
        template.fit("x" * 300 + " {{link}}", {"title": "T", "link": LINK}, ["twitter"])
    assert refused.value.status == 422 and "twitter" in refused.value.message
