"""The competitors area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from persistence.competitors import Competitor
from tests.competitors.factories import make_competitor
from tests.support.contract import RecordFactory


def _competitor(session, workspace, livemode):
    return make_competitor(session, workspace, livemode=livemode).id


def _find_competitor(session, competitor_id):
    # A refused request must have left it as it was made.
    competitor = session.get(Competitor, competitor_id)
    return competitor if competitor is not None and competitor.name == "Acme Coffee" else None


RECORD_FACTORIES = {
    "competitorId": RecordFactory(make=_competitor, find=_find_competitor),
}
