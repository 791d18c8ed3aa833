"""Reading the contract itself (cross-cutting): its paths and operations, for the 405 Allow header
and for the tests generated from it."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

OPENAPI_DIR = Path(__file__).resolve().parent.parent / "openapi"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path: str
    scopes: tuple[str, ...]
    path_params: tuple[str, ...]
    has_body: bool
    body_example: dict | None


def _load(file_name: str) -> dict:
    return yaml.safe_load((OPENAPI_DIR / file_name).read_text())


@lru_cache(maxsize=1)
def path_items() -> dict[str, dict]:
    """Every path template of the contract with its path item (file refs followed)."""
    items = {}
    for template, item in _load("openapi.yaml")["paths"].items():
        if "$ref" in item:
            file_name, _, pointer = item["$ref"].partition("#/")
            item = _load(file_name)[pointer]
        items[template] = item
    return items


def _example(request_body: dict) -> dict | None:
    media = (request_body.get("content") or {}).get("application/json") or {}
    if "example" in media:
        return media["example"]
    examples = media.get("examples") or {}
    for example in examples.values():
        return example.get("value")
    return None


def operations() -> list[Operation]:
    found = []
    for template, item in path_items().items():
        shared_params = item.get("parameters", [])
        for method in HTTP_METHODS:
            if method not in item:
                continue
            operation = item[method]
            params = shared_params + operation.get("parameters", [])
            security = operation.get("security", [])
            scopes = tuple(scope for requirement in security for scopes in requirement.values() for scope in scopes)
            body = operation.get("requestBody")
            found.append(
                Operation(
                    operation_id=operation["operationId"],
                    method=method.upper(),
                    path=template,
                    scopes=scopes,
                    path_params=tuple(p["name"] for p in params if p.get("in") == "path"),
                    has_body=body is not None,
                    body_example=_example(body) if body else None,
                )
            )
    return found
