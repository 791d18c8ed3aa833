"""Handlers of the `crisis` tag."""
from socialpub import envelope
from socialpub.crisis import contacts, incidents, rules
from socialpub.crisis.schemas import (
    ContactSchema,
    IncidentCreateSchema,
    IncidentSchema,
    IncidentUpdateSchema,
    RuleInputSchema,
    RuleSchema,
    StatsSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_session, load

rule_schema = RuleSchema()
rule_input_schema = RuleInputSchema()
incident_schema = IncidentSchema()
incident_create_schema = IncidentCreateSchema()
incident_update_schema = IncidentUpdateSchema()
contact_schema = ContactSchema()
stats_schema = StatsSchema()


def list_crisis_rules(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = rules.list_rules(session=current_session(), principal=current_principal(), limit=limit, offset=offset)
    return envelope.page(result, lambda found: rule_schema.dump(found, many=True))


def create_crisis_rule(body):
    fields = load(rule_input_schema, body)
    rule = rules.create_rule(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(rule_schema.dump(rule), location=f"{API_PREFIX}/crisis/rules")


def list_crisis_incidents(status=None, severity=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = incidents.list_incidents(
        session=current_session(), principal=current_principal(), status=status, severity=severity, limit=limit,
        offset=offset,
    )
    return envelope.page(result, lambda found: incident_schema.dump(found, many=True))


def create_crisis_incident(body):
    fields = load(incident_create_schema, body)
    incident = incidents.open_incident(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(incident_schema.dump(incident), location=f"{API_PREFIX}/crisis/incidents/{incident.id}")


def update_crisis_incident(incident_id, body):
    fields = load(incident_update_schema, body)
    incident = incidents.update_incident(
        session=current_session(), principal=current_principal(), incident_id=incident_id, **fields
    )
    return envelope.ok(incident_schema.dump(incident))


def list_crisis_contacts(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = contacts.list_contacts_page(session=current_session(), principal=current_principal(), limit=limit,
                                         offset=offset)
    return envelope.page(result, lambda found: contact_schema.dump(found, many=True))


def get_crisis_stats(period="30d"):
    return envelope.ok(stats_schema.dump(
        incidents.stats(session=current_session(), principal=current_principal(), period=period)
    ))
