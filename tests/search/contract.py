"""The search area's declarations for the contract tests (tests/support/contract.py):
`{index}` names an index, the same in every workspace and mode (no record to
isolate), and a search needs its `q`."""
from __future__ import annotations

from tests.support.contract import RecordFactory, SuccessRequest


def _index(_session, _workspace, _livemode):
    return "posts"


def _search(_session, _workspace) -> SuccessRequest:
    return SuccessRequest(query={"q": "launch"})


RECORD_FACTORIES = {
    "index": RecordFactory(make=_index, find=lambda _session, name: name, tenant_record=False),
}
SUCCESS_REQUESTS = {
    "search.search_workspace": _search,
    "search.search_index": _search,
}
