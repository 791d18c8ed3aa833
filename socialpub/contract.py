"""Reading the contract itself (cross-cutting): its paths and operations, for the 405 Allow header,
for routing each operation to its handler, and for the tests generated from it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from socialpub.contract_bundle import OPENAPI_DIR, served_document

__all__ = [
    "HANDLERS_PACKAGE", "OPENAPI_DIR", "Operation", "handlers", "operation_ids", "operations", "path_items", "tags",
    "takes_body",
]
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")
# The package of the handler modules: the resolver (socialpub/app.py AreaResolver)
# routes operationId `listPosts` to `handlers.posts.list_posts`.
HANDLERS_PACKAGE = "handlers"


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path: str
    scopes: tuple[str, ...]
    path_params: tuple[str, ...]
    has_body: bool
    body_example: dict | None
    # The operation's first tag: the area whose `handlers/<area>.py` answers it.
    area: str

    @property
    def handler(self) -> str:
        """`<area>.<function>`: operationId `listPosts` of tag `posts` is
        `handlers/posts.py:list_posts`. OperationIds are camelCase so that generated
        clients name their functions `list_posts` in the tag's module."""
        return f"{self.area}.{_snake_case(self.operation_id)}"


def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def path_items() -> dict[str, dict]:
    """Every path template of the contract with its path item, as served (shared
    parameters, schemas and responses are `#/components/...` references)."""
    return served_document()["paths"]


def tags() -> list[dict]:
    """The contract's tags (name, description), in its order: one per area."""
    return served_document().get("tags", [])


def _parameter(parameter: dict) -> dict:
    ref = parameter.get("$ref")
    if ref is None:
        return parameter
    return served_document()["components"]["parameters"][ref.rsplit("/", 1)[-1]]


def _example(request_body: dict) -> dict | None:
    media = (request_body.get("content") or {}).get("application/json") or {}
    if "example" in media:
        return media["example"]
    examples = media.get("examples") or {}
    for example in examples.values():
        return example.get("value")
    return None


@lru_cache(maxsize=1)
def handlers() -> dict[str, str]:
    """operationId -> `<area>.<function>`, for the resolver."""
    return {operation.operation_id: operation.handler for operation in operations()}


@lru_cache(maxsize=1)
def operation_ids() -> dict[str, str]:
    """The function connexion routes an operation to, as its routing scope names it
    (`handlers.posts.list_posts`) -> the contract's operationId (`listPosts`), for the
    request log."""
    return {f"{HANDLERS_PACKAGE}.{handler}": operation_id for operation_id, handler in handlers().items()}


@lru_cache(maxsize=1)
def _body_takers() -> dict[str, list[tuple[re.Pattern, bool]]]:
    """Per method, each operation's path as a pattern and whether it takes a body."""
    table: dict[str, list[tuple[re.Pattern, bool]]] = {}
    for operation in operations():
        pattern = re.escape(operation.path)
        for name in operation.path_params:
            pattern = pattern.replace(re.escape("{" + name + "}"), "[^/]+")
        table.setdefault(operation.method, []).append((re.compile(pattern + "/?"), operation.has_body))
    return table


@lru_cache(maxsize=1)
def _literal_paths() -> dict[str, list[str]]:
    return {
        template.rstrip("/") or "/": sorted(method.upper() for method in item if method in HTTP_METHODS)
        for template, item in path_items().items() if "{" not in template
    }


def literal_path_methods(path: str) -> list[str] | None:
    """The methods the contract declares for `path` (relative to the API's base path)
    when it is a path without parameters (`/templates/collections`); None otherwise.
    A method such a path does not declare is answered 405 before routing, which would
    otherwise hand it to a templated sibling (`/templates/{templateId}`)."""
    return _literal_paths().get(path.rstrip("/") or "/")


def takes_body(method: str, path: str) -> bool | None:
    """Whether the operation at `method` `path` (relative to the API's base path)
    takes a request body; None when no operation is there (routing answers that)."""
    for pattern, has_body in _body_takers().get(method, ()):
        if pattern.fullmatch(path):
            return has_body
    return None


def operations() -> list[Operation]:
    found = []
    for template, item in path_items().items():
        shared_params = item.get("parameters", [])
        for method in HTTP_METHODS:
            if method not in item:
                continue
            operation = item[method]
            params = [_parameter(p) for p in shared_params + operation.get("parameters", [])]
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
                    area=(operation.get("tags") or [""])[0],
                )
            )
    return found
