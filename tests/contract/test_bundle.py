"""The served contract is the bundle of openapi/ (socialpub/contract_bundle.py): every
component of the source files is there under its own name and referenced, never
copied inline; the build is deterministic and refuses what would lose a name; and the
compatibility rule of info.description holds (open value sets in responses, strict
ones in requests)."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from socialpub import contract_bundle
from socialpub.contract_bundle import SECTIONS, ContractBundleError, bundle, served_document

SOURCE = contract_bundle.OPENAPI_DIR


def source_components() -> dict[tuple[str, str], object]:
    found = {}
    for path in sorted((SOURCE / "components").glob("*.yaml")):
        for section, entries in yaml.safe_load(path.read_text()).items():
            for name, value in entries.items():
                found[(section, name)] = value
    return found


def references(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from references(value)
    elif isinstance(node, list):
        for value in node:
            yield from references(value)


def without_refs(node):
    """`node` with every reference reduced to its target's name, for comparing a
    bundled component with its source."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            return {**node, "$ref": node["$ref"].rsplit("/", 1)[-1]}
        return {key: without_refs(value) for key, value in node.items()}
    if isinstance(node, list):
        return [without_refs(value) for value in node]
    return node


def test_two_builds_are_byte_identical():
    assert contract_bundle.to_json(bundle()) == contract_bundle.to_json(bundle())
    assert contract_bundle.to_yaml(bundle()) == contract_bundle.to_yaml(bundle())


def test_every_source_component_is_there_under_its_name_and_unchanged():
    components = served_document()["components"]
    source = source_components()
    assert source, "no components read from openapi/components"
    for (section, name), value in source.items():
        assert name in components.get(section, {}), f"{section}/{name} is missing from the bundle"
        assert without_refs(components[section][name]) == without_refs(value), f"{section}/{name} changed"
    bundled = {(section, name) for section in SECTIONS for name in components.get(section, {})}
    assert bundled == set(source), "the bundle has components no source file defines"


def test_every_reference_is_local_and_resolves():
    document = served_document()
    refs = list(references(document))
    assert refs
    for ref in refs:
        assert ref.startswith("#/components/"), ref
        section, name = ref[len("#/components/"):].split("/")
        assert name in document["components"][section], ref


def test_nothing_is_inlined_twice():
    """No component's content appears anywhere in the bundle except under its name."""
    document = served_document()
    shapes = {
        json.dumps(value, sort_keys=True): f"{section}/{name}"
        for section in SECTIONS for name, value in document["components"].get(section, {}).items()
        if isinstance(value, dict) and len(value) > 1
    }
    copies = []

    def walk(node, where):
        if isinstance(node, dict):
            owner = shapes.get(json.dumps(node, sort_keys=True))
            if owner and where != owner:
                copies.append(f"{owner} copied at {where}")
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(document["paths"], "paths")
    for section in SECTIONS:
        for name, value in document["components"].get(section, {}).items():
            for key, child in value.items():
                walk(child, f"{section}/{name}/{key}")
    assert not copies


def test_every_path_of_the_root_is_bundled():
    root = yaml.safe_load((SOURCE / "openapi.yaml").read_text())
    assert list(served_document()["paths"]) == list(root["paths"])


class TestTheServedContract:
    def test_json_is_the_bundle(self, client):
        response = client.get("/api/v1/openapi.json")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")
        assert response.content == contract_bundle.served_json()
        assert response.json() == served_document()

    def test_yaml_is_the_same_bundle(self, client):
        response = client.get("/api/v1/openapi.yaml")
        assert response.status_code == 200
        assert yaml.safe_load(response.text) == served_document()

    def test_swagger_ui_reads_it(self, client):
        page = client.get("/api/v1/ui/")
        assert page.status_code == 200 and "openapi.json" in page.text


def copy_of_the_contract(tmp_path):
    target = tmp_path / "openapi"
    shutil.copytree(SOURCE, target)
    return target


def edit(path, change):
    content = yaml.safe_load(path.read_text())
    change(content)
    path.write_text(yaml.safe_dump(content, sort_keys=False))


@pytest.mark.parametrize(
    "change, refusal",
    [
        (lambda c: c["schemas"].update(Post={"type": "object"}), "schemas/Post is defined by both"),
        (lambda c: c["schemas"].update(Inner={"$ref": "posts.yaml#/schemas/Post/properties/id"}),
         "must name a whole component"),
        (lambda c: c["schemas"].update(Gone={"$ref": "posts.yaml#/schemas/Gone"}), "names no component"),
        (lambda c: c.update(Loose={"type": "string"}), "is not a components section"),
    ],
    ids=["a name defined twice", "a reference into a component", "a reference to nothing", "a stray top-level key"],
)
def test_the_build_refuses(tmp_path, change, refusal):
    openapi = copy_of_the_contract(tmp_path)
    edit(openapi / "components" / "accounts.yaml", change)
    with pytest.raises(ContractBundleError, match=refusal):
        bundle(openapi)


# --- Compatibility: value sets that may grow are open in responses, closed in requests

def _schemas_reached(document, roots):
    schemas = document["components"]["schemas"]
    seen, pending = set(), [ref.rsplit("/", 1)[-1] for root in roots for ref in references(root)]
    while pending:
        name = pending.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        pending += [ref.rsplit("/", 1)[-1] for ref in references(schemas[name])]
    return seen


def _operations(document):
    for item in document["paths"].values():
        for method, operation in item.items():
            if method != "parameters":
                yield item, operation


def _enums(node, where=""):
    """(where, schema) for every schema in `node` with `enum` or `x-extensible-enum`."""
    if isinstance(node, dict):
        if "enum" in node or "x-extensible-enum" in node:
            yield where, node
        for key, value in node.items():
            yield from _enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _enums(value, f"{where}/{index}")


def test_response_schemas_list_growing_values_as_extensible():
    document = served_document()
    responses = [op["responses"] for _, op in _operations(document)]
    reached = _schemas_reached(document, responses + [document["components"]["responses"]])
    closed = []
    for name in sorted(reached):
        for where, schema in _enums(document["components"]["schemas"][name], name):
            if "enum" in schema:
                # A constant (`success: true`) or a nullable reference's null branch is no value set.
                if not (len(schema["enum"]) == 1 and schema.get("type") in ("boolean", "object")):
                    closed.append(where)
            else:
                assert schema.get("type") == "string", where
                values = schema["x-extensible-enum"]
                assert all(f"`{value}`" in schema.get("description", "") for value in values), (
                    f"{where}: its description must list {values}"
                )
    assert not closed, f"response schemas with a closed enum (use x-extensible-enum): {closed}"


def test_request_schemas_keep_strict_enums():
    document = served_document()
    roots = []
    for item, operation in _operations(document):
        roots += item.get("parameters", []) + operation.get("parameters", [])
        roots.append(operation.get("requestBody", {}))
    reached = _schemas_reached(document, roots)
    parameters = [document["components"]["parameters"][ref.rsplit("/", 1)[-1]]
                  for ref in references(roots) if "/parameters/" in ref]
    extensible = [where for name in sorted(reached) for where, schema in _enums(document["components"]["schemas"][name], name)
                  if "x-extensible-enum" in schema]
    extensible += [where for parameter in parameters for where, schema in _enums(parameter, parameter["name"])
                   if "x-extensible-enum" in schema]
    assert not extensible, f"request schemas must take only listed values (enum): {extensible}"


def test_the_rule_is_written_in_the_description():
    assert "**Compatibility.**" in served_document()["info"]["description"]
