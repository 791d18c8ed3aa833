"""The crisis area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.crisis import CrisisIncident, IncidentStatus
from tests.crisis.factories import make_incident
from tests.support.contract import RecordFactory


def _incident(session, workspace, livemode):
    return make_incident(session, workspace, livemode=livemode).id


def _find_open_incident(session, incident_id):
    # Still investigating, its timeline untouched: a refused update must not have moved it.
    incident = session.execute(
        select(CrisisIncident).where(CrisisIncident.id == incident_id,
                                     CrisisIncident.status == IncidentStatus.INVESTIGATING)
    ).scalar_one_or_none()
    return incident if incident is not None and len(incident.timeline) == 1 else None


RECORD_FACTORIES = {
    "incidentId": RecordFactory(make=_incident, find=_find_open_incident),
}
