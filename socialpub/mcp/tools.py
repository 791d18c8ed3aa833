"""The MCP tools, generated from the served contract: one tool per operation, named by
its operationId, described by its summary and description, its input schema made of
the operation's parameters (by their contract names) and, under `body`, its request
body. Nothing here is written per operation: an operation added to the contract is a
tool at the next start.

The contract's schemas are OpenAPI 3.0 (`nullable`, `example`, `x-` extensions,
`#/components/...` references); a tool's input schema is plain JSON Schema with every
reference resolved into it, so any MCP client can read it without the contract.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache

from socialpub import contract
from socialpub.contract_bundle import served_document
from socialpub.request import API_PREFIX

BODY = "body"
# OpenAPI keywords that are not JSON Schema (or say nothing to a caller of a tool).
_DROPPED = frozenset({"example", "xml", "externalDocs", "discriminator", "deprecated"})
_METHOD_HINTS = {
    # (readOnlyHint, destructiveHint, idempotentHint), by HTTP method.
    "GET": (True, False, True),
    "PUT": (False, False, True),
    "DELETE": (False, True, True),
    "POST": (False, False, False),
    "PATCH": (False, False, False),
}


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # path, query or header
    required: bool


@dataclass(frozen=True)
class ToolSpec:
    """One operation as a tool: what `tools/list` shows and what a call needs to
    become the operation's HTTP request."""

    name: str
    title: str
    description: str
    input_schema: dict
    method: str
    path: str  # the contract's template, relative to the API's base path
    scopes: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    takes_body: bool
    body_required: bool

    @property
    def hints(self) -> tuple[bool, bool, bool]:
        return _METHOD_HINTS.get(self.method, (False, False, False))

    def allowed(self, scopes) -> bool:
        """Whether a key holding `scopes` may call it (the contract's requirement)."""
        return set(self.scopes) <= set(scopes)


class UnresolvableSchema(ValueError):
    """A schema that refers to itself: it cannot be written out in full."""


def _component(ref: str) -> dict:
    _, _, pointer = ref.partition("#/")
    node = served_document()
    for part in pointer.split("/"):
        node = node[part]
    return node


def json_schema(schema: dict, _seen: tuple[str, ...] = ()) -> dict:
    """An OpenAPI 3.0 schema as JSON Schema: references resolved, `nullable` written
    as a null alternative, OpenAPI's own keywords and `x-` extensions left out
    (`example` becomes `examples`)."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in _seen:
            raise UnresolvableSchema(f"{ref} refers to itself")
        resolved = json_schema(_component(ref), _seen + (ref,))
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        return {**resolved, **json_schema(siblings, _seen)} if siblings else resolved
    converted: dict = {}
    for key, value in schema.items():
        if key in _DROPPED or key.startswith("x-") or key == "nullable":
            continue
        if key in ("properties", "patternProperties"):
            converted[key] = {name: json_schema(item, _seen) for name, item in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            converted[key] = json_schema(value, _seen) if isinstance(value, dict) else value
        elif key in ("allOf", "anyOf", "oneOf"):
            converted[key] = [json_schema(item, _seen) for item in value]
        else:
            converted[key] = copy.deepcopy(value)
    if "example" in schema and "examples" not in converted:
        converted["examples"] = [copy.deepcopy(schema["example"])]
    if schema.get("nullable"):
        kind = converted.get("type")
        if isinstance(kind, str):
            converted["type"] = [kind, "null"]
            if "enum" in converted and None not in converted["enum"]:
                converted["enum"] = [*converted["enum"], None]
        elif kind is None:
            converted = {"anyOf": [converted, {"type": "null"}]}
    return converted


def _parameters(item: dict, operation: dict) -> list[dict]:
    declared: dict[tuple[str, str], dict] = {}
    for parameter in item.get("parameters", []) + operation.get("parameters", []):
        parameter = _component(parameter["$ref"]) if "$ref" in parameter else parameter
        declared[(parameter["in"], parameter["name"])] = parameter
    return [parameter for parameter in declared.values() if parameter["in"] in ("path", "query", "header")]


def _description(operation: dict, method: str, template: str, scopes: tuple[str, ...]) -> str:
    parts = [operation.get("summary", "").strip(), operation.get("description", "").strip()]
    needs = f"Needs the {', '.join(scopes)} scope." if scopes else "Needs no scope."
    parts.append(f"{needs} The API's {method} {API_PREFIX}{template}: the result is its JSON answer.")
    return "\n\n".join(part for part in parts if part)


def _tool(template: str, item: dict, method: str, operation: dict) -> ToolSpec:
    security = operation.get("security", [])
    scopes = tuple(scope for requirement in security for names in requirement.values() for scope in names)
    properties: dict[str, dict] = {}
    required: list[str] = []
    parameters = []
    for parameter in _parameters(item, operation):
        schema = json_schema(parameter.get("schema") or {})
        if parameter.get("description"):
            schema = {**schema, "description": parameter["description"].strip()}
        properties[parameter["name"]] = schema
        is_required = bool(parameter.get("required")) or parameter["in"] == "path"
        if is_required:
            required.append(parameter["name"])
        parameters.append(Parameter(parameter["name"], parameter["in"], is_required))
    body = operation.get("requestBody")
    body_required = False
    if body is not None:
        media = (body.get("content") or {}).get("application/json") or {}
        schema = json_schema(media.get("schema") or {})
        if body.get("description"):
            schema = {**schema, "description": body["description"].strip()}
        properties[BODY] = schema
        body_required = bool(body.get("required"))
        if body_required:
            required.append(BODY)
    input_schema: dict = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        input_schema["required"] = required
    upper = method.upper()
    return ToolSpec(
        name=operation["operationId"], title=operation.get("summary", operation["operationId"]).strip(),
        description=_description(operation, upper, template, scopes), input_schema=input_schema, method=upper,
        path=template, scopes=scopes, parameters=tuple(parameters), takes_body=body is not None,
        body_required=body_required,
    )


@lru_cache(maxsize=1)
def all_tools() -> dict[str, ToolSpec]:
    """Every operation of the served contract as a tool, by name, in the contract's order."""
    tools = {}
    for template, item in contract.path_items().items():
        for method in contract.HTTP_METHODS:
            if method in item:
                spec = _tool(template, item, method, item[method])
                tools[spec.name] = spec
    return tools


def tools_for(scopes) -> list[ToolSpec]:
    """The tools a key holding `scopes` may call: what its `tools/list` shows."""
    return [tool for tool in all_tools().values() if tool.allowed(scopes)]
