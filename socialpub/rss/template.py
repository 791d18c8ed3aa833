"""A feed's post template: `{{title}} {{link}}` and the like, filled from an item by
the placeholder engine (`socialpub.placeholders`: its scan, its checks and its filling
rule) and fitted within the platforms' limits."""
from __future__ import annotations

from socialpub import placeholders
from socialpub import platforms as platform_rules
from socialpub.errors import ApiError

DEFAULT_TEMPLATE = "{{title}} {{link}}"
PLACEHOLDERS = ("title", "link", "summary", "author")
MAX_TEMPLATE_CHARS = 2000
ELLIPSIS = "…"
FIELD = "template"


def check_template(template: str | None) -> str:
    """The template, or 422 naming `template` for a blank or too long one, a malformed
    or unclosed placeholder, or the first placeholder it may not use."""
    if template is None:
        return DEFAULT_TEMPLATE
    if not template.strip():
        raise ApiError.field_invalid(FIELD, "template must not be blank.")
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ApiError.field_invalid(FIELD, f"template may be at most {MAX_TEMPLATE_CHARS} characters.")
    placeholders.check_allowed(template, PLACEHOLDERS, field=FIELD, subject="a feed template")
    return template


def _parsed(template: str | placeholders.Parsed) -> placeholders.Parsed:
    if isinstance(template, placeholders.Parsed):
        return template
    return placeholders.parse(template, field=FIELD)


def render(template: str | placeholders.Parsed, values: dict[str, str | None]) -> str:
    """The template filled with the item's values (an empty one leaves no gap and no
    dangling "by"), without spaces around; 422 naming `content` when it would be
    longer than any platform takes."""
    return placeholders.fill(_parsed(template), values, field="content").strip()


def _fits(parsed: placeholders.Parsed, values: dict, platforms) -> bool:
    if placeholders.filled_length(parsed, values) > placeholders.MAX_FILLED_CHARS:
        return False  # longer than any platform takes: not built, let alone posted
    return platform_rules.over_limit(render(parsed, values), platforms) is None


def _shortened(text: str, length: int) -> str:
    if length >= len(text):
        return text
    if length <= 0:
        return ""
    return text[: length - 1].rstrip() + ELLIPSIS


def _longest_fitting(parsed: placeholders.Parsed, values: dict, name: str, platforms) -> dict | None:
    """`values` with `name` cut to the longest length whose post fits every platform,
    or None when even without it the post is too long."""
    full = values.get(name) or ""
    low, high = 0, len(full)
    if not _fits(parsed, {**values, name: ""}, platforms):
        return None
    while low < high:  # the longest length that fits: lengths up to it all fit
        middle = (low + high + 1) // 2
        if _fits(parsed, {**values, name: _shortened(full, middle)}, platforms):
            low = middle
        else:
            high = middle - 1
    return {**values, name: _shortened(full, low)}


def fit(template: str, values: dict[str, str | None], platforms) -> str:
    """The post for an item: the template filled in, with the summary shortened (then,
    if that is not enough, the title) until it fits every platform. The link is never
    cut: a post too long even without summary and title is 422."""
    parsed = _parsed(template)
    if _fits(parsed, values, platforms):
        return render(parsed, values)
    for name in ("summary", "title", "author"):
        shortened = _longest_fitting(parsed, values, name, platforms)
        if shortened is not None:
            return render(parsed, shortened)
        values = {**values, name: ""}
    # Too long even with only the link: 422 naming the platform (render refuses first
    # what would be longer than any platform takes).
    platform_rules.check_length(render(parsed, values), platforms)
    return render(parsed, values)
