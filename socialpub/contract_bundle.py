"""The served contract (cross-cutting): one OpenAPI document bundled from the files of
`openapi/`, with every shared schema, parameter, response and header kept under its
own name in `components` and referenced as `#/components/<section>/<Name>`.

Connexion serves a copy with every reference inlined, which client generators turn
into one anonymous class per use; this document is the one `/api/v1/openapi.json`,
`/api/v1/openapi.yaml`, Swagger UI and the SDK are made from. Connexion keeps reading
the source files for routing and validation.

The layout it relies on: `openapi.yaml` refers to path items in `paths/*.yaml`; every
`components/*.yaml` file is laid out like `components` itself (top-level sections
`schemas`, `parameters`, `responses`, `headers`), so a reference
`../components/posts.yaml#/schemas/Post` names the component `schemas/Post`. A name
defined by two files, a reference to something that is not a whole component, or a
reference to a missing one fails the build.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

import yaml

OPENAPI_DIR = Path(__file__).resolve().parent.parent / "openapi"
ROOT_FILE = "openapi.yaml"
COMPONENTS_FOLDER = "components"
SECTIONS = ("schemas", "parameters", "responses", "headers")


class ContractBundleError(ValueError):
    """The source files cannot be bundled into one document without losing a name."""


# libyaml's parser when PyYAML was built with it (the wheels are): the contract is
# read at every start, and the pure-Python parser took most of a second for it.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}


class _Bundler:
    def __init__(self, openapi_dir: Path):
        self.openapi_dir = openapi_dir.resolve()
        self.files: dict[Path, dict] = {}
        # (section, name) -> the component file that defines it
        self.owners: dict[tuple[str, str], Path] = {}

    def _file(self, path: Path) -> dict:
        path = path.resolve()
        if path not in self.files:
            if not path.is_file():
                raise ContractBundleError(f"{self._name(path)} does not exist")
            self.files[path] = _read(path)
        return self.files[path]

    def _name(self, path: Path) -> str:
        return str(path.resolve().relative_to(self.openapi_dir))

    def _component_files(self) -> list[Path]:
        return sorted((self.openapi_dir / COMPONENTS_FOLDER).glob("*.yaml"))

    def _collect_components(self) -> dict[str, dict]:
        # Every name is known before any reference is rewritten: files refer to each other.
        found: list[tuple[str, str, Path, object]] = []
        for path in self._component_files():
            for section, entries in self._file(path).items():
                if section not in SECTIONS:
                    raise ContractBundleError(
                        f"{self._name(path)}: top-level key {section!r} is not a components section {SECTIONS}"
                    )
                for name, value in (entries or {}).items():
                    owner = self.owners.get((section, name))
                    if owner is not None:
                        raise ContractBundleError(
                            f"{section}/{name} is defined by both {self._name(owner)} and {self._name(path)}: "
                            "component names must be unique across the contract"
                        )
                    self.owners[(section, name)] = path.resolve()
                    found.append((section, name, path, value))
        collected: dict[str, dict] = {section: {} for section in SECTIONS}
        for section, name, path, value in found:
            collected[section][name] = self._rewrite(value, path)
        return collected

    def _target(self, ref: str, base: Path) -> str:
        """The bundled reference for `ref` written in the file `base`."""
        file_part, _, pointer = ref.partition("#")
        target_file = (base.parent / file_part).resolve() if file_part else base.resolve()
        parts = [part for part in pointer.split("/") if part]
        if len(parts) != 2 or parts[0] not in SECTIONS:
            raise ContractBundleError(
                f"{self._name(base)}: $ref {ref!r} must name a whole component, '<file>#/<section>/<Name>'"
            )
        section, name = parts
        if self.owners.get((section, name)) != target_file:
            raise ContractBundleError(f"{self._name(base)}: $ref {ref!r} names no component of {file_part or 'this file'}")
        return f"#/components/{section}/{name}"

    def _rewrite(self, node, base: Path):
        if isinstance(node, dict):
            if "$ref" in node and isinstance(node["$ref"], str):
                return {**node, "$ref": self._target(node["$ref"], base)}
            return {key: self._rewrite(value, base) for key, value in node.items()}
        if isinstance(node, list):
            return [self._rewrite(value, base) for value in node]
        return node

    def _path_item(self, template: str, item: dict) -> dict:
        root = self.openapi_dir / ROOT_FILE
        if "$ref" not in item:
            return self._rewrite(item, root)
        file_part, _, pointer = item["$ref"].partition("#/")
        path = (root.parent / file_part).resolve()
        content = self._file(path)
        if "/" in pointer or pointer not in content:
            raise ContractBundleError(f"{template}: $ref {item['$ref']!r} names no path item of {file_part}")
        return self._rewrite(content[pointer], path)

    def bundle(self) -> dict:
        root = copy.deepcopy(self._file(self.openapi_dir / ROOT_FILE))
        collected = self._collect_components()
        root["paths"] = {template: self._path_item(template, item) for template, item in root["paths"].items()}
        components = root.get("components") or {}
        for section in SECTIONS:
            if section in components:
                raise ContractBundleError(f"{ROOT_FILE}: keep {section} in {COMPONENTS_FOLDER}/*.yaml")
            if collected[section]:
                components[section] = collected[section]
        # Sections in the order of the specification, the root's own (security schemes) after.
        root["components"] = {
            **{section: components[section] for section in SECTIONS if section in components},
            **{key: value for key, value in components.items() if key not in SECTIONS},
        }
        return root


def bundle(openapi_dir: Path = OPENAPI_DIR) -> dict:
    """A fresh bundle of the contract in `openapi_dir` (raises ContractBundleError)."""
    return _Bundler(openapi_dir).bundle()


def to_json(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def to_yaml(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


@lru_cache(maxsize=1)
def served_document() -> dict:
    """The served contract, built once per process. Callers must not change it."""
    return bundle()


@lru_cache(maxsize=1)
def served_json() -> bytes:
    return to_json(served_document()).encode("utf-8")


@lru_cache(maxsize=1)
def served_yaml() -> bytes:
    return to_yaml(served_document()).encode("utf-8")
