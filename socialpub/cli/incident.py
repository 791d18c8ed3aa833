"""`socialpub incident list|show|update`: a workspace's crisis incidents; `update` moves
one forward (investigating, identified, monitoring, resolved) with a note for its
timeline."""
from __future__ import annotations

from persistence.crisis import CrisisIncident, IncidentStatus
from socialpub.cli.records import Action, Noun, paged, scoped_get
from socialpub.crisis import incidents
from socialpub.crisis.schemas import IncidentSchema


def update(*, scope, record_id, args, **_):
    return incidents.update_incident.in_scope(scope, incident_id=record_id, status=args.status, note=args.note)


NOUN = Noun(
    name="incident", help="crisis incidents", model=CrisisIncident, resource="incident",
    list_records=paged(incidents.list_incidents), show_record=scoped_get(CrisisIncident, "incident"),
    dump=IncidentSchema().dump, columns=("id", "livemode", "status", "severity", "title", "openedAt"),
    list_arguments=((("--status",), {"choices": [status.value for status in IncidentStatus]}),),
    actions=(
        Action("update", "move an incident forward, with a note for its timeline", update, done="Updated",
               arguments=((("--status",), {"required": True, "choices": [status.value for status in IncidentStatus]}),
                          (("--note",), {}))),
    ),
)
register = NOUN.register
