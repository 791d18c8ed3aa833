"""Incidents through the API: opened by hand (with the outbox event), moved forward
only with a timeline entry each (409 otherwise, resolved final), listed with filters;
and the stats (open by severity, opened and resolved in the period, MTTA, MTTR)."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from persistence.crisis import CrisisIncident
from tests.crisis.conftest import NOW, incident_events
from tests.crisis.factories import make_incident, make_signal
from tests.support.factories import make_workspace

URL = "/api/v1/crisis/incidents"


def open_incident(client, key, **fields) -> dict:
    body = {"title": "Delivery delays", "severity": "high", **fields}
    response = client.post(URL, headers=key.headers, json=body)
    assert response.status_code == 201, response.text
    assert response.headers["location"] == f"{URL}/{response.json()['data']['id']}"
    return response.json()["data"]


def move(client, key, incident_id, status, note=None):
    body = {"status": status} if note is None else {"status": status, "note": note}
    return client.patch(f"{URL}/{incident_id}", headers=key.headers, json=body)


def test_opening_by_hand(client, session, workspace, key, fake_clock):
    signal = make_signal(session, workspace)
    data = open_incident(client, key, title="  Delivery delays ", signalIds=[str(signal.id)], note="Support sees it too.")
    assert data["title"] == "Delivery delays" and data["status"] == "investigating" and data["ruleId"] is None
    assert data["signalIds"] == [str(signal.id)] and data["openedAt"] == "2026-11-20T12:00:30.000Z"
    assert data["acknowledgedAt"] is None and data["resolvedAt"] is None
    assert data["timeline"] == [{"status": "investigating", "note": "Support sees it too.",
                                 "at": "2026-11-20T12:00:30.000Z", "by": "test key"}]
    [event] = incident_events(session)
    assert event.type == "incident.opened" and event.data == {"incident": data} and event.livemode is False


def test_signals_must_be_the_key_workspace_and_mode(client, session, workspace, key):
    for foreign in (make_signal(session, make_workspace(session, name="Other Co")),
                    make_signal(session, workspace, livemode=True)):
        response = client.post(URL, headers=key.headers, json={
            "title": "Delays", "severity": "low", "signalIds": [str(foreign.id)]})
        assert response.status_code == 422, response.text
        assert response.json()["error"]["details"][0]["field"] == "signalIds[0]"
    for body in ({"title": " ", "severity": "low"}, {"title": "x", "severity": "dire"}, {"title": "x"},
                 {"title": "x", "severity": "low", "note": ""}):
        assert client.post(URL, headers=key.headers, json=body).status_code == 422
    session.expire_all()
    assert session.execute(select(func.count()).select_from(CrisisIncident)).scalar_one() == 0
    assert incident_events(session) == []


def test_forward_only_resolved_final(client, session, key, fake_clock):
    incident = open_incident(client, key)
    fake_clock.advance(90)
    moved = move(client, key, incident["id"], "identified", "A carrier outage.")
    assert moved.status_code == 200, moved.text
    data = moved.json()["data"]
    assert data["status"] == "identified" and data["acknowledgedAt"] == "2026-11-20T12:02:00.000Z"
    assert data["timeline"][-1] == {"status": "identified", "note": "A carrier outage.",
                                    "at": "2026-11-20T12:02:00.000Z", "by": "test key"}
    for status in ("identified", "investigating"):
        refused = move(client, key, incident["id"], status)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflict"
        assert "only moves forward" in refused.json()["error"]["message"]
    fake_clock.advance(600)
    # Skipping ahead is allowed: monitoring is not required before resolving.
    resolved = move(client, key, incident["id"], "resolved").json()["data"]
    assert resolved["status"] == "resolved" and resolved["resolvedAt"] == "2026-11-20T12:12:00.000Z"
    assert resolved["acknowledgedAt"] == "2026-11-20T12:02:00.000Z" and len(resolved["timeline"]) == 3
    assert [event.type for event in incident_events(session)] == ["incident.opened", "incident.resolved"]
    assert incident_events(session, "incident.resolved")[0].data == {"incident": resolved}
    for status in ("monitoring", "resolved"):
        final = move(client, key, incident["id"], status)
        assert final.status_code == 409 and "final" in final.json()["error"]["message"]
    assert len(incident_events(session)) == 2


def test_a_first_change_straight_to_resolved_acknowledges_it(client, key, fake_clock):
    incident = open_incident(client, key)
    fake_clock.advance(30)
    data = move(client, key, incident["id"], "resolved", "False alarm.").json()["data"]
    assert data["acknowledgedAt"] == data["resolvedAt"] == "2026-11-20T12:01:00.000Z"


@pytest.mark.parametrize("body", [{}, {"note": "only a note"}, {"status": "closed"}, {"status": "resolved", "x": 1}])
def test_a_refused_update_changes_nothing(client, session, workspace, key, body):
    incident = make_incident(session, workspace)
    response = client.patch(f"{URL}/{incident.id}", headers=key.headers, json=body)
    assert response.status_code == 422, response.text
    session.expire_all()
    assert session.get(CrisisIncident, incident.id).status == "investigating"


def test_list_newest_first_with_filters(client, session, workspace, key):
    old = make_incident(session, workspace, severity="low", opened_at=NOW - dt.timedelta(days=2))
    new = make_incident(session, workspace, severity="critical", opened_at=NOW - dt.timedelta(days=1))
    resolved = make_incident(session, workspace, severity="critical", status="resolved", opened_at=NOW)
    make_incident(session, workspace, livemode=True)
    everything = client.get(URL, headers=key.headers).json()
    assert [each["id"] for each in everything["data"]] == [str(resolved.id), str(new.id), str(old.id)]
    critical_open = client.get(URL, headers=key.headers, params={"severity": "critical", "status": "investigating"}).json()
    assert [each["id"] for each in critical_open["data"]] == [str(new.id)]
    assert critical_open["pagination"]["totalItems"] == 1
    assert client.get(URL, headers=key.headers, params={"status": "closed"}).status_code == 422


def test_stats(client, session, workspace, key, fake_clock):
    day = dt.timedelta(days=1)
    hour, minute = dt.timedelta(hours=1), dt.timedelta(minutes=1)
    # Opened 3 days ago, acknowledged after 10 minutes, resolved after 2 hours.
    make_incident(session, workspace, severity="high", status="resolved", opened_at=NOW - 3 * day,
                  acknowledged_at=NOW - 3 * day + 10 * minute, resolved_at=NOW - 3 * day + 2 * hour)
    # Opened yesterday, acknowledged after 20 minutes, still open.
    make_incident(session, workspace, severity="critical", status="identified", opened_at=NOW - day,
                  acknowledged_at=NOW - day + 20 * minute)
    # Opened an hour ago, not acknowledged.
    make_incident(session, workspace, severity="low", opened_at=NOW - hour)
    # Opened 40 days ago, still open: counted as open, not in the 30 days.
    make_incident(session, workspace, severity="low", opened_at=NOW - 40 * day)
    make_incident(session, workspace, livemode=True, severity="critical")

    data = client.get("/api/v1/crisis/stats", headers=key.headers).json()["data"]
    assert data["period"] == "30d" and data["to"] == "2026-11-20T12:00:30.000Z"
    assert data["from"] == "2026-10-21T12:00:30.000Z"
    assert data["openIncidents"] == {"total": 3, "low": 2, "medium": 0, "high": 0, "critical": 1}
    assert data["openedInPeriod"] == 3 and data["resolvedInPeriod"] == 1
    assert data["mttaSeconds"] == 900.0 and data["mttrSeconds"] == 7200.0

    week = client.get("/api/v1/crisis/stats", headers=key.headers, params={"period": "7d"}).json()["data"]
    assert week["openedInPeriod"] == 3
    empty = client.get("/api/v1/crisis/stats", headers=make_other_key(session).headers).json()["data"]
    assert empty["mttaSeconds"] is None and empty["mttrSeconds"] is None and empty["openedInPeriod"] == 0
    assert client.get("/api/v1/crisis/stats", headers=key.headers, params={"period": "1y"}).status_code == 422


def make_other_key(session):
    from tests.support.factories import make_key

    return make_key(session, make_workspace(session, name="Quiet Co"))
