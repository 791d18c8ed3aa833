"""Crisis rules through the API: defaults, the condition's combinations refused by the
schema, monitors and contacts found in the key's workspace and mode, nothing saved
when refused."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from persistence.crisis import CrisisRule
from tests.crisis.factories import make_contact, make_monitor
from tests.support.factories import make_workspace

URL = "/api/v1/crisis/rules"
RULE = {"name": "Complaints spike", "condition": {"type": "negativeSpike"}}


def create(client, key, **changes):
    return client.post(URL, headers=key.headers, json={**RULE, **changes})


def created(client, key, **changes) -> dict:
    response = create(client, key, **changes)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def refused(response, field: str) -> str:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in [detail["field"] for detail in error["details"]], error
    return next(detail["message"] for detail in error["details"] if detail["field"] == field)


def rule_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(CrisisRule)).scalar_one()


def test_defaults(client, key):
    response = create(client, key, name="  Complaints spike  ")
    data = response.json()["data"]
    assert response.status_code == 201 and response.headers["location"] == URL
    assert data["name"] == "Complaints spike" and data["enabled"] is True and data["livemode"] is False
    assert data["condition"] == {"type": "negativeSpike", "windowMinutes": 60, "threshold": 3.0, "keywords": [],
                                 "minimumVolume": 10}
    assert data["cooldownMinutes"] == 60 and data["severity"] == "medium"
    assert data["monitorIds"] == [] and data["contactIds"] == [] and data["lastTrippedAt"] is None


def test_each_condition_type(client, key):
    keyword = created(client, key, condition={"type": "keywordSpike", "keywords": [" refund ", "Refund", "outage"],
                                              "windowMinutes": 5, "threshold": 0.5, "minimumVolume": 1})
    assert keyword["condition"]["keywords"] == ["refund", "outage"]
    assert keyword["condition"]["windowMinutes"] == 5 and keyword["condition"]["threshold"] == 0.5
    floor = created(client, key, condition={"type": "sentimentFloor", "threshold": -0.4, "windowMinutes": 1440},
                    severity="critical", cooldownMinutes=10080)
    assert floor["condition"]["threshold"] == -0.4 and floor["severity"] == "critical"


@pytest.mark.parametrize("condition, field", [
    ({"type": "keywordSpike"}, "condition.keywords"),
    ({"type": "negativeSpike", "keywords": ["refund"]}, "condition.keywords"),
    ({"type": "sentimentFloor", "keywords": ["refund"], "threshold": 0}, "condition.keywords"),
    ({"type": "sentimentFloor"}, "condition.threshold"),
    ({"type": "sentimentFloor", "threshold": 1.5}, "condition.threshold"),
    ({"type": "negativeSpike", "threshold": 0.2}, "condition.threshold"),
    ({"type": "negativeSpike", "threshold": -1}, "condition.threshold"),
    ({"type": "negativeSpike", "threshold": 11}, "condition.threshold"),
    ({"type": "negativeSpike", "windowMinutes": 4}, "condition.windowMinutes"),
    ({"type": "negativeSpike", "windowMinutes": 1441}, "condition.windowMinutes"),
    ({"type": "negativeSpike", "minimumVolume": 0}, "condition.minimumVolume"),
    ({"type": "keywordSpike", "keywords": ["  "]}, "condition.keywords[0]"),
    ({"type": "keywordSpike", "keywords": []}, "condition.keywords"),
    ({"type": "spike"}, "condition.type"),
    ({}, "condition.type"),
])
def test_a_condition_the_schema_refuses_saves_nothing(client, session, key, condition, field):
    refused(create(client, key, condition=condition), field)
    assert rule_count(session) == 0


def test_the_refusal_reads_as_the_contract_says_it(client, key):
    message = refused(create(client, key, condition={"type": "negativeSpike", "keywords": ["x"]}), "condition.keywords")
    assert "keywordSpike" in message


def test_other_fields_are_checked(client, session, key):
    refused(create(client, key, name="   "), "name")
    refused(create(client, key, cooldownMinutes=0), "cooldownMinutes")
    refused(create(client, key, severity="severe"), "severity")
    refused(create(client, key, surprise=True), "surprise")
    assert rule_count(session) == 0


def test_monitors_and_contacts_of_the_key_workspace_and_mode(client, session, workspace, key):
    monitor, contact = make_monitor(session, workspace), make_contact(session, workspace)
    data = created(client, key, monitorIds=[str(monitor.id)], contactIds=[str(contact.id)])
    assert data["monitorIds"] == [str(monitor.id)] and data["contactIds"] == [str(contact.id)]

    other = make_workspace(session, name="Other Co")
    live_monitor = make_monitor(session, workspace, livemode=True)
    for foreign in (make_monitor(session, other), live_monitor):
        message = refused(create(client, key, monitorIds=[str(monitor.id), str(foreign.id)]), "monitorIds[1]")
        assert str(foreign.id) in message
    for foreign in (make_contact(session, other), make_contact(session, workspace, livemode=True)):
        refused(create(client, key, contactIds=[str(foreign.id)]), "contactIds[0]")
    refused(create(client, key, contactIds=["not-an-id"]), "contactIds[0]")
    assert rule_count(session) == 1


def test_list_in_creation_order_of_the_key_mode(client, session, workspace, key, live_key):
    first = created(client, key, name="First")
    second = created(client, key, name="Second")
    created(client, live_key, name="Live one")
    response = client.get(URL, headers=key.headers, params={"limit": 1})
    body = response.json()
    assert [rule["id"] for rule in body["data"]] == [first["id"]]
    assert body["pagination"]["totalItems"] == 2 and body["pagination"]["hasNextPage"] is True
    page_two = client.get(URL, headers=key.headers, params={"limit": 1, "offset": 1}).json()
    assert [rule["id"] for rule in page_two["data"]] == [second["id"]]
