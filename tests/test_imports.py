"""The module graph: no import cycles among the project's modules; areas that never
import each other in a loop, directly or through others, and shared modules that
import no area (ARCHITECTURE.md, "Which way imports go"); and every area importable
on its own in a fresh interpreter (so an area never works only because another one
happened to be imported first)."""
from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

from socialpub.areas import AREAS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("socialpub", "handlers", "persistence", "workers")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                modules[_module_name(path)] = path
    return modules


def _imported(node, package: str, modules) -> set[str]:
    found = set()
    if isinstance(node, ast.Import):
        found.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        found.add(base)
        # `from package import module` imports that module too.
        found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)
    return found


def _package(path: Path, name: str) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _top_level_imports(path: Path, name: str, modules) -> set[str]:
    """What a module imports when it is imported: statements at module level (in
    `if`/`try` blocks too), not those inside functions, which run later."""
    package = _package(path, name)
    found = set()

    def visit(statements):
        for node in statements:
            found.update(_imported(node, package, modules))
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text()).body)
    return {module for module in found if module in modules}


def _all_imports(path: Path, name: str, modules) -> set[str]:
    """Everything a module imports, at any depth (inside functions too): a deferred
    import is still a dependency."""
    package = _package(path, name)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        found.update(_imported(node, package, modules))
    return {module for module in found if module in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in graph:
        if node not in index:
            connect(node)
    return components


def test_no_module_imports_itself_back_through_others():
    modules = _project_modules()
    graph = {name: _top_level_imports(path, name, modules) - {name} for name, path in modules.items()}
    # A package's __init__ importing its own modules is not a cycle of the layers.
    for name in graph:
        graph[name] = {target for target in graph[name] if not name.startswith(target + ".")}
    assert _cycles(graph) == []


def _area_modules(area: str) -> list[str]:
    names = [f"socialpub.{area}"] + [
        _module_name(path) for path in sorted((ROOT / "socialpub" / area).glob("*.py")) if path.name != "__init__.py"
    ]
    for layer in ("persistence", "handlers"):
        if importlib.util.find_spec(f"{layer}.{area}") is not None:
            names.append(f"{layer}.{area}")
    return names


def test_each_area_imports_alone_in_a_fresh_interpreter():
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    # One interpreter per area, all at once: each starts from nothing, and together
    # they take about as long as one.
    running = {
        area: subprocess.Popen(
            [sys.executable, "-c", script, *_area_modules(area)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for area in AREAS
    }
    failures = {}
    for area, process in running.items():
        _, errors = process.communicate(timeout=120)
        if process.returncode != 0:
            failures[area] = errors[-2000:]
    assert failures == {}


# An area's module past this many lines mixes concerns: split it by what each part does
# (as publishing is: dispatch, runner, publications, first_comments, service).
MAX_AREA_MODULE_LINES = 420


def test_no_area_module_outgrows_one_concern():
    long = {
        str(path.relative_to(ROOT)): lines
        for area in AREAS for path in sorted((ROOT / "socialpub" / area).glob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_AREA_MODULE_LINES
    }
    assert long == {}


def test_the_registry_names_every_area_package():
    packages = {path.parent.name for path in (ROOT / "socialpub").glob("*/service.py")}
    packages |= {path.parent.name for path in (ROOT / "socialpub").glob("*/jobs.py")}
    assert packages <= set(AREAS), f"area packages missing from socialpub/areas.py: {packages - set(AREAS)}"


# -- which way imports go between areas (ARCHITECTURE.md) ------------------------------

# The entry points: they wire areas to HTTP, MCP, the CLI, the dashboard, the docs portal
# and the worker process, so they may import any area; nothing in an area imports them.
ENTRY_POINTS = (
    "handlers", "socialpub.cli", "socialpub.dashboard", "socialpub.portal", "socialpub.app", "socialpub.middleware",
    "socialpub.security", "socialpub.mcp", "workers.worker",
)
# The tenant itself: every tenant record points at it, so every area may read it.
TENANT_ROOT = "persistence.workspaces"


def _under(module: str, prefixes) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def _area_of(module: str) -> str | None:
    """The area a domain or records module belongs to (`socialpub.rss.items`,
    `persistence.rss`), or None for shared modules and entry points."""
    if module == TENANT_ROOT:
        return None
    parts = module.split(".")
    if len(parts) > 1 and parts[0] in ("socialpub", "persistence") and parts[1] in AREAS:
        return parts[1]
    return None


def _dependencies(modules) -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """(area -> the areas it imports, [(shared module, area module it imports)])."""
    areas: dict[str, set[str]] = {area: set() for area in AREAS}
    shared_imports = []
    for name, path in modules.items():
        if _under(name, ENTRY_POINTS):
            continue
        area = _area_of(name)
        for target in _all_imports(path, name, modules):
            target_area = _area_of(target)
            if target_area is None:
                continue
            if area is None:
                shared_imports.append((name, target))
            elif target_area != area:
                areas[area].add(target_area)
    return areas, shared_imports


def test_areas_never_import_each_other_in_a_loop():
    areas, _ = _dependencies(_project_modules())
    assert _cycles(areas) == [], (
        "areas that import each other, directly or through others: react to a change by subscribing to its "
        "announcement (socialpub.announcements) instead of importing the reader"
    )


def test_shared_modules_import_no_area():
    _, shared_imports = _dependencies(_project_modules())
    assert shared_imports == []


def test_no_area_imports_an_entry_point():
    modules = _project_modules()
    found = [
        (name, target) for name, path in modules.items() if _area_of(name) is not None
        for target in _all_imports(path, name, modules) if _under(target, ENTRY_POINTS)
    ]
    assert found == []


def test_the_layering_check_sees_a_loop():
    assert _cycles({"posts": {"calendar"}, "calendar": {"rss"}, "rss": {"posts"}, "events": set()}) == [
        ["calendar", "posts", "rss"]
    ]
