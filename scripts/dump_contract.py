"""Writes the served contract (the bundle of openapi/ that /api/v1/openapi.json
answers, built by the server's own code) to a file, without starting a server.

    python scripts/dump_contract.py build/contract/openapi.json   # or .yaml
"""
from __future__ import annotations

import sys
from pathlib import Path

from socialpub import contract_bundle


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].endswith((".json", ".yaml")):
        print("usage: dump_contract.py <file.json|file.yaml>", file=sys.stderr)
        return 2
    target = Path(argv[0])
    render = contract_bundle.served_json if target.suffix == ".json" else contract_bundle.served_yaml
    try:
        content = render()
    except contract_bundle.ContractBundleError as error:
        print(f"the contract cannot be bundled: {error}", file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
