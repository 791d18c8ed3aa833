"""End to end through the API: a rule on a monitor, signals ingested through
listening's bulk ingest, and the incident the rule opened, its event and its contact's
email queued; more signals within the cooldown open nothing more."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import select

from persistence.crisis import CrisisNotification
from tests.crisis.conftest import NOW, incident_events
from tests.crisis.factories import make_contact
from tests.crisis.test_evaluation import NEGATIVE, POSITIVE


def stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_signals_ingested_open_an_incident(client, session, workspace, key, fake_clock):
    contact = make_contact(session, workspace, email="ana@example.com")
    monitor = client.post("/api/v1/listening/monitors", headers=key.headers,
                          json={"name": "Acme", "keywords": ["acme"]})
    assert monitor.status_code == 201, monitor.text
    monitor_id = monitor.json()["data"]["id"]
    rule = client.post("/api/v1/crisis/rules", headers=key.headers, json={
        "name": "Acme complaints", "monitorIds": [monitor_id], "contactIds": [str(contact.id)], "severity": "high",
        "condition": {"type": "negativeSpike", "windowMinutes": 15, "minimumVolume": 4}, "cooldownMinutes": 60,
    })
    assert rule.status_code == 201, rule.text

    def ingest(*contents, at=NOW):
        signals = [{"platform": "bluesky", "externalId": uuid.uuid4().hex,
                    "content": content, "postedAt": stamp(at)} for content in contents]
        response = client.post("/api/v1/listening/signals/bulk", headers=key.headers, json={"signals": signals})
        assert response.status_code in (200, 201), response.text
        return response.json()["data"]

    ingest(NEGATIVE, NEGATIVE, POSITIVE, "Nothing about the brand, terrible")
    assert client.get("/api/v1/crisis/incidents", headers=key.headers).json()["data"] == []
    ingest(NEGATIVE, NEGATIVE)
    [incident] = client.get("/api/v1/crisis/incidents", headers=key.headers).json()["data"]
    assert incident["ruleId"] == rule.json()["data"]["id"] and incident["severity"] == "high"
    assert incident["title"] == "Acme complaints: 4 negative signals in 15 minutes" and len(incident["signalIds"]) == 2
    assert [event.type for event in incident_events(session)] == ["incident.opened"]
    session.expire_all()
    [notification] = session.execute(select(CrisisNotification)).scalars()
    assert notification.status == "queued" and notification.email == "ana@example.com"
    [listed] = client.get("/api/v1/crisis/rules", headers=key.headers).json()["data"]
    assert listed["lastTrippedAt"] == "2026-11-20T12:00:30.000Z"

    fake_clock.advance(5 * 60)
    ingest(*[NEGATIVE] * 10, at=NOW + dt.timedelta(minutes=5))
    assert len(client.get("/api/v1/crisis/incidents", headers=key.headers).json()["data"]) == 1
    stats = client.get("/api/v1/crisis/stats", headers=key.headers).json()["data"]
    assert stats["openIncidents"]["high"] == 1 and stats["openedInPeriod"] == 1
