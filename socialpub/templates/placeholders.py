"""`{{variable}}` placeholders: finding them in a text, checking them against the
declared variables, and filling them in one pass.

Filling is a single substitution over the template's own text: a value is inserted as
it is, so a value that itself looks like a placeholder stays literal text and nothing
a caller sends is ever evaluated."""
from __future__ import annotations

import re

from socialpub.errors import ApiError

NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
# Every `{{...}}`, well-formed or not, so that a malformed one is refused on save
# rather than left in the text for a reader to see.
_ANY = re.compile(r"\{\{(.*?)\}\}", re.S)
_VALID = re.compile(rf"^\s*({NAME})\s*$")
# A placeholder with the spaces before it (or, at the start of a line, after it): an
# optional variable without a value takes them away with it, so no double space or
# dangling gap is left.
_FILLED = re.compile(
    r"(?m)(?P<start>^[ \t]*\{\{\s*(?P<first>" + NAME + r")\s*\}\}[ \t]*)"
    r"|(?P<inner>[ \t]*\{\{\s*(?P<name>" + NAME + r")\s*\}\})"
)


def placeholders(text: str, *, field: str = "content") -> list[str]:
    """The variable names `text` uses, in order of first use; 422 for a malformed one."""
    names: list[str] = []
    for match in _ANY.finditer(text):
        valid = _VALID.match(match.group(1))
        if valid is None:
            raise ApiError.field_invalid(
                field, f"{match.group(0)[:80]} is not a placeholder: write {{{{name}}}} with letters, digits or _."
            )
        if valid.group(1) not in names:
            names.append(valid.group(1))
    if "{{" in _ANY.sub("", text):
        raise ApiError.field_invalid(field, f"{field} has a {{{{ that is never closed with }}}}.")
    return names


def check_declared(content: str, variables: list[dict], *, allowed: tuple[str, ...] | None = None) -> None:
    """Every placeholder declared, every declared variable used, names unique, and
    (for reply templates) only the `allowed` names."""
    used = placeholders(content)
    declared: list[str] = []
    for index, variable in enumerate(variables):
        name = variable["name"]
        if name in declared:
            raise ApiError.field_invalid(f"variables[{index}].name", f"The variable {name} is declared twice.")
        declared.append(name)
    for name in used:
        if name not in declared:
            raise ApiError.field_invalid("content", f"content uses {{{{{name}}}}}, which variables does not declare.")
    for index, name in enumerate(declared):
        if name not in used:
            raise ApiError.field_invalid(
                f"variables[{index}].name", f"The variable {name} is declared but content never uses {{{{{name}}}}}."
            )
    if allowed is not None:
        for name in used:
            if name not in allowed:
                raise ApiError.field_invalid(
                    "content", f"A reply may use only {', '.join('{{' + a + '}}' for a in allowed)}; not {{{{{name}}}}}."
                )


def fill(text: str, values: dict[str, str | None]) -> str:
    """`text` with each placeholder replaced by its value; a placeholder whose value is
    None or empty goes, with the spaces around it that would leave a gap."""

    def replace(match: re.Match) -> str:
        whole = match.group(0)
        name = match.group("first") or match.group("name")
        value = values.get(name)
        if not value:
            return ""
        return whole[: whole.index("{{")] + value + whole[whole.rindex("}}") + 2:]

    return _FILLED.sub(replace, text)
