"""Crisis through the generated client: a rule saved (one refused by the schema),
negative signals ingested through listening's bulk ingest opening an incident, an
incident opened by hand and moved forward to resolved (then refused: resolved is
final), the contacts listed, and the stats."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from socialpub_client.api.crisis import (
    create_crisis_incident,
    create_crisis_rule,
    get_crisis_stats,
    list_crisis_contacts,
    list_crisis_incidents,
    list_crisis_rules,
    update_crisis_incident,
)
from socialpub_client.api.listening import ingest_signals_bulk
from socialpub_client.models.crisis_condition_input import CrisisConditionInput
from socialpub_client.models.crisis_condition_type_input import CrisisConditionTypeInput
from socialpub_client.models.crisis_contact_list import CrisisContactList
from socialpub_client.models.crisis_incident_create import CrisisIncidentCreate
from socialpub_client.models.crisis_incident_list import CrisisIncidentList
from socialpub_client.models.crisis_incident_response import CrisisIncidentResponse
from socialpub_client.models.crisis_incident_status_input import CrisisIncidentStatusInput
from socialpub_client.models.crisis_incident_update import CrisisIncidentUpdate
from socialpub_client.models.crisis_rule_create import CrisisRuleCreate
from socialpub_client.models.crisis_rule_list import CrisisRuleList
from socialpub_client.models.crisis_rule_response import CrisisRuleResponse
from socialpub_client.models.crisis_severity_input import CrisisSeverityInput
from socialpub_client.models.crisis_stats_response import CrisisStatsResponse
from socialpub_client.models.period_input import PeriodInput
from socialpub_client.models.signal_bulk_ingest import SignalBulkIngest
from socialpub_client.models.signal_bulk_item import SignalBulkItem
from socialpub_client.models.signal_ingest_result_response import SignalIngestResultResponse

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow

COMPLAINT = "Acme support is terrible, I hate this awful service"


def test_signals_open_an_incident_that_is_resolved(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    rule = expect(
        create_crisis_rule.sync_detailed(client=client, body=CrisisRuleCreate(
            name="Journey complaints", severity=CrisisSeverityInput.HIGH, cooldown_minutes=120,
            condition=CrisisConditionInput(type_=CrisisConditionTypeInput.NEGATIVESPIKE, window_minutes=5,
                                           threshold=3.0, minimum_volume=3),
        )),
        201, CrisisRuleResponse,
    ).data
    assert rule.condition.window_minutes == 5 and rule.last_tripped_at is None and rule.contact_ids == []
    refused = create_crisis_rule.sync_detailed(client=client, body=CrisisRuleCreate(
        name="Journey keywords", condition=CrisisConditionInput(type_=CrisisConditionTypeInput.KEYWORDSPIKE),
    ))
    assert expect_error(refused, 422, "validation_error").error.message
    rules = expect(list_crisis_rules.sync_detailed(client=client, limit=100), 200, CrisisRuleList)
    assert rule.id in [each.id for each in rules.data]

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ingested = expect(
        ingest_signals_bulk.sync_detailed(client=client, body=SignalBulkIngest(signals=[
            SignalBulkItem(platform="bluesky", external_id=f"journey-{uuid.uuid4()}", content=COMPLAINT, posted_at=now)
            for _ in range(3)
        ])),
        200, SignalIngestResultResponse,
    )
    assert ingested.success is True
    opened = expect(
        list_crisis_incidents.sync_detailed(client=client, status=CrisisIncidentStatusInput.INVESTIGATING,
                                            severity=CrisisSeverityInput.HIGH),
        200, CrisisIncidentList,
    ).data
    by_rule = [incident for incident in opened if incident.rule_id == rule.id]
    assert len(by_rule) == 1 and len(by_rule[0].signal_ids) == 3
    assert by_rule[0].timeline[0].by == f"crisis rule {rule.id}"

    manual = expect(
        create_crisis_incident.sync_detailed(client=client, body=CrisisIncidentCreate(
            title="Journey delivery delays", severity=CrisisSeverityInput.MEDIUM, note="Support sees it too.",
        )),
        201, CrisisIncidentResponse,
    ).data
    assert manual.rule_id is None and manual.status == "investigating"
    identified = expect(
        update_crisis_incident.sync_detailed(manual.id, client=client, body=CrisisIncidentUpdate(
            status=CrisisIncidentStatusInput.IDENTIFIED, note="A carrier outage.",
        )),
        200, CrisisIncidentResponse,
    ).data
    assert identified.acknowledged_at is not None and identified.timeline[-1].note == "A carrier outage."
    resolved = expect(
        update_crisis_incident.sync_detailed(manual.id, client=client, body=CrisisIncidentUpdate(
            status=CrisisIncidentStatusInput.RESOLVED,
        )),
        200, CrisisIncidentResponse,
    ).data
    assert resolved.resolved_at is not None and [entry.status for entry in resolved.timeline] == [
        "investigating", "identified", "resolved"]
    expect_error(update_crisis_incident.sync_detailed(manual.id, client=client, body=CrisisIncidentUpdate(
        status=CrisisIncidentStatusInput.MONITORING)), 409, "conflict")
    expect_error(update_crisis_incident.sync_detailed(uuid.uuid4(), client=client, body=CrisisIncidentUpdate(
        status=CrisisIncidentStatusInput.RESOLVED)), 404, "resource_not_found")

    contacts = expect(list_crisis_contacts.sync_detailed(client=client), 200, CrisisContactList)
    assert contacts.pagination.total_items == len(contacts.data)
    stats = expect(get_crisis_stats.sync_detailed(client=client, period=PeriodInput.LAST_7_DAYS), 200,
                   CrisisStatsResponse).data
    assert stats.period == "7d" and stats.opened_in_period >= 2 and stats.resolved_in_period >= 1
    assert stats.open_incidents.high >= 1 and stats.mttr_seconds is not None and stats.mtta_seconds is not None
