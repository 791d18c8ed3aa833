"""A feed's post template: `{{title}} {{link}}` and the like, filled from an item and
fitted within the platforms' limits."""
from __future__ import annotations

import re

from socialpub import platforms as platform_rules
from socialpub.errors import ApiError

DEFAULT_TEMPLATE = "{{title}} {{link}}"
PLACEHOLDERS = ("title", "link", "summary", "author")
MAX_TEMPLATE_CHARS = 2000
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
ELLIPSIS = "…"


def check_template(template: str | None) -> str:
    """The template, or 422 naming the first placeholder it may not use."""
    if template is None:
        return DEFAULT_TEMPLATE
    if not template.strip():
        raise ApiError.field_invalid("template", "template must not be blank.")
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ApiError.field_invalid("template", f"template may be at most {MAX_TEMPLATE_CHARS} characters.")
    for match in _PLACEHOLDER.finditer(template):
        if match.group(1) not in PLACEHOLDERS:
            raise ApiError.field_invalid(
                "template",
                f"Unknown placeholder {{{{{match.group(1)}}}}}; use {', '.join('{{' + name + '}}' for name in PLACEHOLDERS)}.",
            )
    return template


def render(template: str, values: dict[str, str | None]) -> str:
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1)) or "", template).strip()


def _shortened(text: str, length: int) -> str:
    if length >= len(text):
        return text
    if length <= 0:
        return ""
    return text[: length - 1].rstrip() + ELLIPSIS


def _longest_fitting(template: str, values: dict, name: str, platforms) -> dict | None:
    """`values` with `name` cut to the longest length whose post fits every platform,
    or None when even without it the post is too long."""
    full = values.get(name) or ""
    low, high = 0, len(full)
    if platform_rules.over_limit(render(template, {**values, name: ""}), platforms) is not None:
        return None
    while low < high:  # the longest length that fits: lengths up to it all fit
        middle = (low + high + 1) // 2
        if platform_rules.over_limit(render(template, {**values, name: _shortened(full, middle)}), platforms) is None:
            low = middle
        else:
            high = middle - 1
    return {**values, name: _shortened(full, low)}


def fit(template: str, values: dict[str, str | None], platforms) -> str:
    """The post for an item: the template filled in, with the summary shortened (then,
    if that is not enough, the title) until it fits every platform. The link is never
    cut: a post too long even without summary and title is 422."""
    content = render(template, values)
    if platform_rules.over_limit(content, platforms) is None:
        return content
    for name in ("summary", "title", "author"):
        shortened = _longest_fitting(template, values, name, platforms)
        if shortened is not None:
            return render(template, shortened)
        values = {**values, name: ""}
    platform_rules.check_length(content, platforms)
    return content
