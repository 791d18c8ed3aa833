"""Prints README's configuration table, generated from the settings' declarations
(`socialpub.config`: the fields of Settings, then the variables other modules read
themselves); with --write, rewrites it in README.md between the markers
<!-- settings:start --> and <!-- settings:end -->.

    python scripts/settings_table.py            # prints the table
    python scripts/settings_table.py --write    # updates README.md
"""
from __future__ import annotations

import sys
from pathlib import Path

from socialpub.config import DECLARED, READ_ELSEWHERE, Declared

README = Path(__file__).resolve().parent.parent / "README.md"
START = "<!-- settings:start -->"
END = "<!-- settings:end -->"
HEADER = ("| variable | default | value | meaning |", "|---|---|---|---|")


def table() -> str:
    rows = [*HEADER]
    for declared in DECLARED:
        spec = declared.setting
        rows.append(_row(spec.env, spec.shown_default or _shown(declared.default), _value(declared), spec.help))
    for variable in READ_ELSEWHERE:
        rows.append(_row(variable.env, variable.shown_default, variable.value, variable.help))
    return "\n".join(rows) + "\n"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in [f"`{cells[0]}`", *cells[1:]]) + " |"


def _shown(default) -> str:
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return "`true`" if default else "`false`"
    if isinstance(default, float) and default.is_integer():
        return f"`{int(default)}`"
    return f"`{default}`"


def _value(declared: Declared) -> str:
    if declared.type is bool:
        return "boolean: `1`, `true`, `yes`, `on` (any case) are true"
    if declared.type is str:
        return "text"
    kind = "integer" if declared.type is int else "number"
    low, high = declared.setting.min, declared.setting.max
    if low is not None and high is not None:
        return f"{kind}, {_bound(low)} to {_bound(high)}"
    if low is not None:
        return f"{kind}, at least {_bound(low)}"
    if high is not None:
        return f"{kind}, at most {_bound(high)}"
    return kind


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def readme_with(readme: str, generated: str) -> str:
    """`readme` with the text between the markers replaced by `generated`."""
    before, start, rest = readme.partition(START)
    _, end, after = rest.partition(END)
    if not start or not end:
        raise ValueError(f"README.md has no {START} ... {END} markers around its configuration table")
    return f"{before}{START}\n{generated}{END}{after}"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--write"]):
        print("usage: settings_table.py [--write]", file=sys.stderr)
        return 2
    generated = table()
    if not argv:
        sys.stdout.write(generated)
        return 0
    current = README.read_text()
    updated = readme_with(current, generated)
    if updated != current:
        README.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
