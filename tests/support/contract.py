"""What the contract tests (tests/contract) need from each area, and where they find it.

The contract tests run against every operation in openapi/. For an operation that
names a record in its path (`/posts/{postId}`) they need to make such a record; for
its documented success they may need more. Each area declares both in its own test
folder, in tests/<area>/contract.py (the area is the operation's tag: `getPost`, tagged
`posts`, is handled by `posts.get_post` and declared in tests/posts/contract.py):

    RECORD_FACTORIES = {"postId": RecordFactory(make=..., find=...)}
        The record a path parameter names, for every operation whose path names it:
        another workspace's or mode's is 404, and the caller's own is what the
        operation succeeds on.
    SUCCESS_REQUESTS = {"posts.retry_first_comment": request_for_a_failed_comment}
        By handler (`<area>.<function>`), only for an operation whose documented success needs more than a fresh record
        and the spec's example body: a function (session, workspace) -> SuccessRequest,
        for the workspace's test mode.

The areas' files are found by walking tests/*/, so a new area is covered by adding
its file; an operation whose path parameter nobody declares fails the contract tests.
"""
from __future__ import annotations

import importlib
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Callable

TESTS_DIR = Path(__file__).resolve().parent.parent
AREA_MODULE = "contract"


@dataclass(frozen=True)
class RecordFactory:
    # (session, workspace, livemode) -> the id of a new record of that workspace and mode.
    make: Callable[[Any, Any, bool], uuid.UUID]
    # (session, record id) -> the record if it is still there as it was made, else None:
    # a refused request must leave it alone.
    find: Callable[[Any, uuid.UUID], Any]
    # False for a path parameter that names no tenant's record (a search index's
    # name): the same for every workspace and mode, so it has no isolation to test.
    tenant_record: bool = True


@dataclass(frozen=True)
class SuccessRequest:
    # Path parameters not given here are made by their RECORD_FACTORIES.
    path_values: dict = field(default_factory=dict)
    # None: the spec's example body (or none, for an operation without one).
    body: dict | None = None
    # Query parameters the operation needs to succeed (a calendar's date range).
    query: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AreaDeclarations:
    record_factories: dict[str, RecordFactory]
    success_requests: dict[str, Callable[[Any, Any], SuccessRequest]]
    # Where each of the above was declared, by parameter name or handler (`posts.get_post`).
    declared_in: dict[str, str]


def area_file(area: str) -> str:
    """The file that declares the records of an area's operations."""
    return f"tests/{area}/{AREA_MODULE}.py"


def _area_modules():
    support = Path(__file__).resolve().parent
    for folder in sorted(TESTS_DIR.iterdir()):
        if folder == support or not (folder / f"{AREA_MODULE}.py").is_file():
            continue
        yield f"tests/{folder.name}/{AREA_MODULE}.py", importlib.import_module(f"tests.{folder.name}.{AREA_MODULE}")


@cache
def declarations() -> AreaDeclarations:
    """Every area's RECORD_FACTORIES and SUCCESS_REQUESTS; one name declared by two areas
    is an error, since either could be the one the tests use."""
    record_factories, success_requests, declared_in = {}, {}, {}
    for file, module in _area_modules():
        for table, found in (
            (record_factories, getattr(module, "RECORD_FACTORIES", {})),
            (success_requests, getattr(module, "SUCCESS_REQUESTS", {})),
        ):
            for name, value in found.items():
                if name in declared_in:
                    raise ValueError(f"{name!r} is declared by both {declared_in[name]} and {file}: keep one")
                table[name] = value
                declared_in[name] = file
    return AreaDeclarations(record_factories, success_requests, declared_in)


def inline_refs(document: dict) -> dict:
    """A copy of a bundled document with every `#/components/...` reference replaced by
    what it names (the contract has no recursive schemas), for code that walks schemas."""
    components = document.get("components", {})

    def resolve(node, seen=()):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/"):
                if ref in seen:
                    raise ValueError(f"{ref} refers to itself")
                section, name = ref[len("#/components/"):].split("/", 1)
                return resolve(components[section][name], (*seen, ref))
            return {key: resolve(value, seen) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(value, seen) for value in node]
        return node

    return resolve(document)
