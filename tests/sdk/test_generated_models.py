"""The generated client has one model per named schema of the served contract: a
schema inlined again (an object written out where a `$ref` belongs) would come back
as extra, anonymous model classes, and this count would grow past the schemas."""
from __future__ import annotations

import json
from typing import Any

from openapi_python_client.config import ConfigFile
from openapi_python_client.strings import PythonIdentifier

from socialpub import contract_bundle
from tests.sdk.conftest import SDK_CONFIG, SDK_DIR

# The generator writes a model for a named object schema and for a named closed enum
# (`enum`, the `...Input` request enums); response enums (`x-extensible-enum`) and
# scalars (Id, Timestamp) are plain `str`. Allowance for models no named schema
# accounts for: none. Every object in the contract is a named component today, so
# any extra model file is an inlined schema.
ALLOWANCE = 0


def _schemas_with_a_model() -> set[str]:
    served: dict[str, Any] = json.loads(contract_bundle.served_json())
    schemas: dict[str, dict[str, Any]] = served["components"]["schemas"]
    return {name for name, schema in schemas.items() if schema.get("type") == "object" or "enum" in schema}


def _snake(name: str) -> str:
    return "".join(f"_{char.lower()}" if char.isupper() and index else char.lower() for index, char in enumerate(name))


def _module_names() -> dict[str, str]:
    """The model module the generator writes for a schema that scripts/sdk-config.yaml
    renames (`Error` is the client's `ErrorResponse`, in `error_response.py`), named as
    the generator names it."""
    config = ConfigFile.load_from_path(SDK_CONFIG)
    return {
        name: PythonIdentifier(override.module_name or override.class_name or name, config.field_prefix)
        for name, override in (config.class_overrides or {}).items()
    }


def test_one_model_per_named_schema() -> None:
    renamed = _module_names()
    schemas = _schemas_with_a_model()
    assert set(renamed) <= schemas, f"class overrides for no named schema: {sorted(set(renamed) - schemas)}"
    expected = {renamed.get(name) or _snake(name) for name in schemas}
    generated = {path.stem for path in (SDK_DIR / "socialpub_client" / "models").glob("*.py")} - {"__init__"}
    assert len(generated) <= len(expected) + ALLOWANCE, (
        f"{len(generated)} model files for {len(expected)} schemas; not from a named schema: "
        f"{sorted(generated - expected)}"
    )
    assert expected <= generated, f"named schemas without a model: {sorted(expected - generated)}"
