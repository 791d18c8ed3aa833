"""Incidents: opened by a rule (`open_for_rule`, in the ingest's transaction) or by
hand, moved forward through their statuses (investigating → identified → monitoring
→ resolved; skipping ahead allowed, resolved final), each change a timeline entry
naming who made it, and the stats of the crisis dashboard. Opening and resolving
write the `incident.opened` and `incident.resolved` webhook events in the same
transaction."""
from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from persistence.crisis import CrisisIncident, CrisisRule, IncidentStatus, Severity
from persistence.listening import ListeningSignal
from socialpub import clock
from socialpub.crisis.schemas import IncidentSchema
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.events import service as events
from socialpub.principal import Principal
from socialpub.serialization import UtcTimestamp
from socialpub.tenancy import TenantScope, parse_id, scoped
from socialpub.validation import checked_name

ORDER = tuple(IncidentStatus)
MAX_SIGNALS = 100
MAX_NOTE_CHARS = 2000
PERIODS = {"7d": 7, "30d": 30, "90d": 90}


@functools.cache
def _incident_schema() -> IncidentSchema:
    return IncidentSchema()


def _timestamp(moment: dt.datetime) -> str:
    return UtcTimestamp()._serialize(moment, None, None)


def _entry(status: str, note: str | None, at: dt.datetime, by: str) -> dict:
    return {"status": str(status), "note": note, "at": _timestamp(at), "by": by}


def _note(note) -> str | None:
    if note is None:
        return None
    text = note.strip() if isinstance(note, str) else ""
    if len(text) > MAX_NOTE_CHARS:
        raise ApiError.field_invalid("note", f"note may be at most {MAX_NOTE_CHARS} characters.")
    return text or None


def _record_event(scope: TenantScope, incident: CrisisIncident, type: str) -> None:
    scope.session.flush()
    events.record(scope.session, workspace_id=incident.workspace_id, livemode=incident.livemode, type=type,
                  data={"incident": _incident_schema().dump(incident)})


# -- listing --------------------------------------------------------------------------

@scoped
def list_incidents(scope: TenantScope, *, status: str | None = None, severity: str | None = None,
                   limit: int = 20, offset: int = 0) -> Page:
    session = scope.session
    criteria = []
    if status is not None:
        if status not in set(IncidentStatus):
            raise ApiError.field_invalid("query.status", f"status must be one of {', '.join(IncidentStatus)}.")
        criteria.append(CrisisIncident.status == status)
    if severity is not None:
        if severity not in set(Severity):
            raise ApiError.field_invalid("query.severity", f"severity must be one of {', '.join(Severity)}.")
        criteria.append(CrisisIncident.severity == severity)
    query = scope.select(CrisisIncident, *criteria).order_by(CrisisIncident.opened_at.desc(), CrisisIncident.id)
    return paginate(session, query, total=scope.count_query(CrisisIncident, *criteria), limit=limit, offset=offset)


# -- opening ----------------------------------------------------------------------------

def _open(scope: TenantScope, *, title: str, severity: str, rule_id, signal_ids: list[str], note: str | None, by: str,
          now: dt.datetime, livemode: bool | None = None) -> CrisisIncident:
    incident = CrisisIncident(
        title=title, severity=str(severity), status=IncidentStatus.INVESTIGATING, rule_id=rule_id,
        signal_ids=signal_ids, timeline=[_entry(IncidentStatus.INVESTIGATING, note, now, by)], opened_at=now,
        created_at=now,
    )
    scope.add(incident, livemode=livemode)
    _record_event(scope, incident, "incident.opened")
    return incident


def open_incident(*, session: Session, principal: Principal, title: str, severity: str, signal_ids=None,
                  note: str | None = None) -> CrisisIncident:
    """Opens an incident by hand; no contact is emailed."""
    scope = TenantScope.of(session, principal)
    title = checked_name(title, field="title")
    if severity not in set(Severity):
        raise ApiError.field_invalid("severity", f"severity must be one of {', '.join(Severity)}.")
    incident = _open(scope, title=title, severity=severity, rule_id=None, signal_ids=checked_signal_ids(scope, signal_ids),
                     note=_note(note), by=scope.actor.name, now=clock.now())
    session.commit()
    return incident


def open_for_rule(scope: TenantScope, rule: CrisisRule, *, title: str, note: str, signal_ids: list[str],
                  now: dt.datetime) -> CrisisIncident:
    """The incident a tripped rule opens, in the caller's transaction (the ingest's)."""
    return _open(scope, title=title[:200], severity=rule.severity, rule_id=rule.id, signal_ids=signal_ids[:MAX_SIGNALS],
                 note=note[:MAX_NOTE_CHARS], by=f"crisis rule {rule.id}", now=now, livemode=rule.livemode)


def checked_signal_ids(scope: TenantScope, signal_ids, *, field: str = "signal_ids") -> list[str]:
    """The ids as saved (text, each once), each naming a listening signal of the scope;
    422 naming the first entry that does not."""
    given = [(index, value, parse_id(value)) for index, value in enumerate(signal_ids or [])]
    if len(given) > MAX_SIGNALS:
        raise ApiError.field_invalid(field, f"At most {MAX_SIGNALS} signals.")
    wanted = list(dict.fromkeys(parsed for _, _, parsed in given if parsed is not None))
    found = set()
    if wanted:
        found = set(scope.session.execute(
            select(ListeningSignal.id).where(*scope.criteria(ListeningSignal), ListeningSignal.id.in_(wanted))
        ).scalars())
    for index, value, parsed in given:
        if parsed not in found:
            raise ApiError.field_invalid(f"{field}[{index}]", f"No listening signal with id '{value}'.")
    return [str(parsed) for parsed in wanted]


# -- moving forward ---------------------------------------------------------------------

def move_incident(scope: TenantScope, incident: CrisisIncident, *, status: str, note: str | None = None) -> CrisisIncident:
    """Moves the incident to a later status, in the caller's transaction; 409 for
    its own status, an earlier one, or a resolved incident."""
    if status not in set(IncidentStatus):
        raise ApiError.field_invalid("status", f"status must be one of {', '.join(IncidentStatus)}.")
    note = _note(note)
    current = incident.status
    if current == IncidentStatus.RESOLVED:
        raise ApiError.conflict("The incident is resolved; a resolved incident is final.")
    if ORDER.index(status) <= ORDER.index(current):
        later = ", ".join(ORDER[ORDER.index(current) + 1:])
        raise ApiError.conflict(f"The incident is {current}; it only moves forward (to {later}).")
    now = clock.now()
    incident.status = status
    incident.timeline = [*incident.timeline, _entry(status, note, now, scope.actor.name)]
    incident.acknowledged_at = incident.acknowledged_at or now
    incident.updated_at = now
    if status == IncidentStatus.RESOLVED:
        incident.resolved_at = now
        _record_event(scope, incident, "incident.resolved")
    return incident


@scoped
def update_incident(scope: TenantScope, *, incident_id, status: str,
                    note: str | None = None) -> CrisisIncident:
    session = scope.session
    incident = scope.get(CrisisIncident, incident_id, resource="incident", for_update=True)
    move_incident(scope, incident, status=status, note=note)
    session.commit()
    return incident


# -- stats ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stats:
    period: str
    since: dt.datetime
    until: dt.datetime
    open_incidents: dict
    opened_in_period: int
    resolved_in_period: int
    mtta_seconds: float | None
    mttr_seconds: float | None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def stats(*, session: Session, principal: Principal, period: str = "30d") -> Stats:
    if period not in PERIODS:
        raise ApiError.field_invalid("query.period", f"period must be one of {', '.join(PERIODS)}.")
    scope = TenantScope.of(session, principal)
    until = clock.now()
    since = until - dt.timedelta(days=PERIODS[period])
    open_rows = session.execute(
        select(CrisisIncident.severity, func.count())
        .where(*scope.criteria(CrisisIncident), CrisisIncident.status != IncidentStatus.RESOLVED)
        .group_by(CrisisIncident.severity)
    ).all()
    open_incidents = {str(severity): 0 for severity in Severity}
    for severity, count in open_rows:
        open_incidents[severity] = open_incidents.get(severity, 0) + count
    open_incidents["total"] = sum(count for _, count in open_rows)
    opened = session.execute(
        select(CrisisIncident.opened_at, CrisisIncident.acknowledged_at, CrisisIncident.resolved_at)
        .where(*scope.criteria(CrisisIncident), CrisisIncident.opened_at >= since)
    ).all()
    resolved = scope.count(CrisisIncident, CrisisIncident.resolved_at >= since)
    return Stats(
        period=period, since=since, until=until, open_incidents=open_incidents, opened_in_period=len(opened),
        resolved_in_period=resolved,
        mtta_seconds=_mean([(acked - opened_at).total_seconds() for opened_at, acked, _ in opened if acked is not None]),
        mttr_seconds=_mean([(done - opened_at).total_seconds() for opened_at, _, done in opened if done is not None]),
    )
