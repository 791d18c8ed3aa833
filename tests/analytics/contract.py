"""The analytics area's records for the contract tests (tests/support/contract.py).

Its operations name no record in their paths, and each succeeds on a workspace with
nothing measured yet (empty reports), so there is nothing to declare."""
from __future__ import annotations

RECORD_FACTORIES: dict = {}

SUCCESS_REQUESTS: dict = {}
