"""`{{name}}` placeholders (cross-cutting: shared by templates, rss and autoreply; it
imports no area, only the cross-cutting `errors` and `platforms`): finding them in a
text, checking them, and filling them.

Finding. One left-to-right scan (`parse`): each `{{` is paired with the first `}}`
after it, and what lies between, spaces aside, must be a name (a letter or `_`, then
letters, digits or `_`; at most 64). Anything else between them is a malformed
placeholder, and a `{{` with no `}}` after it is an unclosed one: both are 422
`validation_error` naming the caller's field. A `}}` with no `{{` before it is plain
text. The scan reads each character a bounded number of times, so the time it takes
grows with the text's length and nothing else, whatever the text holds.

Checking. `check_allowed` refuses a name outside a fixed set (a reply's `author` and
`platform`, a feed's `title`, `link`, `summary` and `author`); `check_declared`
refuses a content template's placeholder that its variables do not declare, and a
declared variable the content never uses.

Filling (`fill`). Each placeholder is replaced by its value, in one pass over the
text: a value is inserted literally, so a value that looks like a placeholder stays
text, and nothing is evaluated. A placeholder whose value is missing, empty or only
spaces leaves no gap and no dangling word: it goes, and with it

1. the spaces before it and the connectors directly before it on its line, each with
   the spaces before it: a connector is one of the words `by`, `via`, `from`, `with`,
   `and`, `or`, `at`, `on`, `in`, `for`, `to`, `of` (in any case), or a run of the
   signs `-` `–` `—` `|` `:` `·` `•` `/` `&` `@`, standing as a word of its own (a
   sign stuck to a word, as in `Price:`, is not one). Only the template's own text
   between the previous placeholder and this one is taken, never a filled value.
2. when that leaves it at the start of a line (or of the text): the spaces after it,
   and the runs of those signs directly after it (not words), with their spaces.

So `{{title}} by {{author}}` without an author is the title alone, `{{title}} -
{{author}}: {{link}}` is `title: link`, `Thanks {{author}}, see you` is `Thanks, see
you`, and `{{author}}: hello` is `hello`.

Bounding. What a fill can produce is bounded: `fill` computes the length of the
result from the text and the values' lengths (each value counted as many times as
its placeholder appears) before building anything, and refuses (422 naming `field`,
`variables` unless told) a result longer than `MAX_FILLED_CHARS`, the longest post
any platform takes."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from socialpub.errors import ApiError
from socialpub.platforms import CONTENT_LIMITS

# The longest filled text: the longest post any platform takes (Facebook's 63,206).
MAX_FILLED_CHARS = max(CONTENT_LIMITS.values())
NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
_NAME = re.compile(NAME, re.ASCII)
OPEN, CLOSE = "{{", "}}"

CONNECTOR_WORDS = frozenset({"by", "via", "from", "with", "and", "or", "at", "on", "in", "for", "to", "of"})
CONNECTOR_SIGNS = frozenset("-–—|:·•/&@")
_LONGEST_WORD = max(len(word) for word in CONNECTOR_WORDS)
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# The spaces of a line: every whitespace character that does not end one.
SPACES = "".join(ch for ch in map(chr, range(0x3001)) if ch.isspace() and ch not in LINE_BREAKS)
_SPACE_SET = frozenset(SPACES)
_BOUNDARY = _SPACE_SET | LINE_BREAKS


@dataclass(frozen=True)
class Parsed:
    """A text cut at its placeholders: `literals` has one more item than `slots`, and
    the text is literals[0] + {{slots[0]}} + literals[1] + ... + literals[-1]."""
    literals: tuple[str, ...]
    slots: tuple[str, ...]

    @property
    def names(self) -> list[str]:
        """The names used, in order of first use."""
        return list(dict.fromkeys(self.slots))


def parse(text: str, *, field: str = "content") -> Parsed:
    """`text` cut at its placeholders; 422 naming `field` for a malformed or unclosed one.

    Linear: `str.find` moves forward from where the last placeholder ended, and the
    name between `{{` and `}}` is checked by a pattern that gives up within 64
    characters."""
    literals: list[str] = []
    slots: list[str] = []
    start = 0
    while True:
        opened = text.find(OPEN, start)
        if opened < 0:
            break
        closed = text.find(CLOSE, opened + 2)
        if closed < 0:
            raise ApiError.field_invalid(
                field, f"{field} has a {{{{ that is never closed with }}}} (at character {opened + 1})."
            )
        name = text[opened + 2:closed].strip()
        if _NAME.fullmatch(name) is None:
            shown = text[opened:closed + 2]
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise ApiError.field_invalid(
                field, f"{shown} is not a placeholder: write {{{{name}}}} with letters, digits or _."
            )
        literals.append(text[start:opened])
        slots.append(name)
        start = closed + 2
    literals.append(text[start:])
    return Parsed(tuple(literals), tuple(slots))


def placeholders(text: str, *, field: str = "content") -> list[str]:
    """The names `text` uses, in order of first use; 422 for a malformed or unclosed one."""
    return parse(text, field=field).names


def _listed(names: Iterable[str]) -> str:
    return ", ".join(f"{{{{{name}}}}}" for name in names)


def check_allowed(text: str | Parsed, allowed: Iterable[str], *, field: str, subject: str) -> Parsed:
    """`text` parsed, or 422 naming `field` and the first name it may not use
    (`subject` says whose text it is: "A reply", "A feed template")."""
    parsed = text if isinstance(text, Parsed) else parse(text, field=field)
    _check_names(parsed.names, tuple(allowed), field=field, subject=subject)
    return parsed


def _check_names(names: list[str], allowed: tuple[str, ...], *, field: str, subject: str) -> None:
    for name in names:
        if name not in allowed:
            raise ApiError.field_invalid(
                field, f"Unknown placeholder {{{{{name}}}}}: {subject} may use only {_listed(allowed)}."
            )


def check_declared(content: str, variables: list[dict], *, allowed: Iterable[str] | None = None,
                   subject: str = "A reply template") -> None:
    """Every placeholder of `content` declared, every declared variable used, names
    unique, and (when `allowed` is given) only those names."""
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
        _check_names(used, tuple(allowed), field="content", subject=subject)


def _present(values: Mapping[str, str | None], names: Iterable[str]) -> dict[str, str]:
    """The values that fill their placeholder (not missing, empty or only spaces), by name."""
    present = {}
    for name in names:
        value = values.get(name)
        if value is not None and value.strip():
            present[name] = value
    return present


def filled_length(text: str | Parsed, values: Mapping[str, str | None]) -> int:
    """An upper bound on the length of `fill(text, values)`, without building it: the
    text between the placeholders, plus each value as many times as it is used (what
    an empty placeholder takes away is not subtracted)."""
    parsed = text if isinstance(text, Parsed) else parse(text)
    present = _present(values, parsed.names)
    lengths = {name: len(value) for name, value in present.items()}
    return sum(map(len, parsed.literals)) + sum(lengths.get(name, 0) for name in parsed.slots)


def fill(text: str | Parsed, values: Mapping[str, str | None], *, limit: int = MAX_FILLED_CHARS,
         field: str = "variables") -> str:
    """`text` with each placeholder replaced by its value, by the rule of the module's
    docstring; 422 naming `field` when the result could be longer than `limit`
    (checked before it is built)."""
    parsed = text if isinstance(text, Parsed) else parse(text)
    length = filled_length(parsed, values)
    if length > limit:
        raise ApiError.field_invalid(
            field, f"The filled text would be {length:,} characters (each value counted every time it is used); "
                   f"at most {limit:,} are allowed."
        )
    present = _present(values, parsed.names)
    literals = parsed.literals
    out: list[str] = []
    at_line_start = True  # whether what `out` holds ends at the start of a line

    def emit(piece: str) -> None:
        nonlocal at_line_start
        if piece:
            out.append(piece)
            at_line_start = piece[-1] in LINE_BREAKS

    literal = literals[0]
    for index, name in enumerate(parsed.slots):
        following = literals[index + 1]
        value = present.get(name)
        if value is not None:
            emit(literal)
            emit(value)
        else:
            emit(_without_trailing_connectors(literal))
            if at_line_start:
                following = _without_leading_signs(following)
        literal = following
    emit(literal)
    return "".join(out)


def _connector_before(literal: str, end: int) -> int | None:
    """Where the connector that ends at `end` starts, or None when the word there is
    not one (or is stuck to other text)."""
    start = end
    while start > 0 and literal[start - 1] in CONNECTOR_SIGNS:
        start -= 1
    if start < end and (start == 0 or literal[start - 1] in _BOUNDARY):
        return start
    start = end
    while start > 0 and end - start <= _LONGEST_WORD and literal[start - 1] not in _BOUNDARY:
        start -= 1
    if (start == 0 or literal[start - 1] in _BOUNDARY) and literal[start:end].lower() in CONNECTOR_WORDS:
        return start
    return None


def _without_trailing_connectors(literal: str) -> str:
    """`literal` without the spaces and connectors at its end (on its last line).
    Indices only, one slice at the end: a literal of many connectors costs its length."""
    end = _spaces_before(literal, len(literal))
    while end:
        start = _connector_before(literal, end)
        if start is None:
            break
        end = _spaces_before(literal, start)
    return literal[:end]


def _without_leading_signs(literal: str) -> str:
    """`literal` without the spaces and runs of connecting signs at its start (on its
    first line)."""
    size = len(literal)
    begin = _spaces_after(literal, 0)
    while begin < size and literal[begin] in CONNECTOR_SIGNS:
        end = begin
        while end < size and literal[end] in CONNECTOR_SIGNS:
            end += 1
        if end < size and literal[end] not in _BOUNDARY:
            break  # a sign stuck to a word, as in "-fold"
        begin = _spaces_after(literal, end)
    return literal[begin:]


def _spaces_before(literal: str, end: int) -> int:
    while end > 0 and literal[end - 1] in _SPACE_SET:
        end -= 1
    return end


def _spaces_after(literal: str, begin: int) -> int:
    while begin < len(literal) and literal[begin] in _SPACE_SET:
        begin += 1
    return begin
