"""Crisis records for tests, made directly as models where the API itself is under test."""
from __future__ import annotations

import datetime as dt
import uuid

from persistence.crisis import CrisisContact, CrisisIncident, CrisisRule, IncidentStatus
from persistence.listening import ListeningMonitor, ListeningSignal


def make_contact(session, workspace, *, livemode: bool = False, **fields) -> CrisisContact:
    values = dict(name="Ana Comms", email=f"ana-{uuid.uuid4().hex[:8]}@example.com", phone="+14155550123",
                  role="Head of communications")
    values.update(fields)
    contact = CrisisContact(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(contact)
    session.commit()
    return contact


def make_rule(session, workspace, *, livemode: bool = False, **fields) -> CrisisRule:
    values = dict(name="Complaints spike", enabled=True, monitor_ids=[], condition_type="negativeSpike",
                  window_minutes=60, threshold=3.0, keywords=[], minimum_volume=10, cooldown_minutes=60,
                  severity="high", contact_ids=[])
    values.update(fields)
    rule = CrisisRule(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(rule)
    session.commit()
    return rule


def make_incident(session, workspace, *, livemode: bool = False, status: str = IncidentStatus.INVESTIGATING,
                  **fields) -> CrisisIncident:
    now = fields.pop("opened_at", None) or dt.datetime.now(dt.timezone.utc)
    values = dict(title="Delivery delays", severity="medium", status=status, rule_id=None, signal_ids=[],
                  timeline=[{"status": "investigating", "note": None, "at": "2026-11-20T12:00:00.000Z", "by": "tests"}],
                  opened_at=now)
    values.update(fields)
    incident = CrisisIncident(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(incident)
    session.commit()
    return incident


def make_monitor(session, workspace, *, livemode: bool = False, **fields) -> ListeningMonitor:
    values = dict(name="Brand", keywords=["acme"], required_keywords=[], excluded_keywords=[], platforms=[],
                  languages=[], enabled=True)
    values.update(fields)
    monitor = ListeningMonitor(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(monitor)
    session.commit()
    return monitor


def make_signal(session, workspace, *, livemode: bool = False, **fields) -> ListeningSignal:
    values = dict(platform="bluesky", external_id=uuid.uuid4().hex, author="@sam", content="Acme lost my parcel",
                  posted_at=dt.datetime.now(dt.timezone.utc), sentiment_score=-0.6, sentiment_label="negative")
    values.update(fields)
    signal = ListeningSignal(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(signal)
    session.commit()
    return signal
