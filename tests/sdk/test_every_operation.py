"""Every operation of the served contract is called by a journey of tests/sdk: each
generated module `socialpub_client/api/<tag>/<function>.py` is imported by a
journey file, and its `sync_detailed` called there."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from socialpub import contract_bundle
from tests.sdk.conftest import SDK_DIR

JOURNEYS = sorted(Path(__file__).parent.glob("test_*_journey.py"))


def _snake(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def _operations() -> set[tuple[str, str]]:
    served: dict[str, Any] = json.loads(contract_bundle.served_json())
    return {
        (operation["tags"][0], _snake(operation["operationId"]))
        for item in served["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def _called_by(journey: Path) -> set[tuple[str, str]]:
    tree = ast.parse(journey.read_text())
    imported: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("socialpub_client.api."):
            tag = node.module.rsplit(".", 1)[1]
            for alias in node.names:
                imported[alias.asname or alias.name] = (tag, alias.name)
    return {
        imported[node.func.value.id]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name) and node.func.value.id in imported
    }


def test_each_tag_has_its_journey() -> None:
    tags = {tag for tag, _ in _operations()}
    assert {f"test_{tag}_journey.py" for tag in tags} <= {journey.name for journey in JOURNEYS}


def test_every_operation_is_called_by_a_journey() -> None:
    operations = _operations()
    generated = {
        (module.parent.name, module.stem)
        for module in (SDK_DIR / "socialpub_client" / "api").glob("*/*.py") if module.stem != "__init__"
    }
    assert generated == operations, "the client and the contract disagree: run `make sdk`"
    called = set().union(*(_called_by(journey) for journey in JOURNEYS))
    assert operations <= called, f"operations no journey calls: {sorted(operations - called)}"
