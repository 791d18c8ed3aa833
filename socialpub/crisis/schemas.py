"""The contract's shapes of crisis rules, incidents, contacts and stats."""
from __future__ import annotations

from marshmallow import RAISE, fields

from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class _Input(CompiledSchema):
    class Meta:
        unknown = RAISE


class ConditionInputSchema(_Input):
    type = fields.String(required=True)
    window_minutes = fields.Integer(data_key="windowMinutes")
    threshold = fields.Float()
    keywords = fields.List(fields.String())
    minimum_volume = fields.Integer(data_key="minimumVolume")


class RuleInputSchema(_Input):
    name = fields.String(required=True)
    enabled = fields.Boolean()
    monitor_ids = fields.List(fields.String(), data_key="monitorIds")
    condition = fields.Nested(ConditionInputSchema, required=True)
    cooldown_minutes = fields.Integer(data_key="cooldownMinutes")
    severity = fields.String()
    contact_ids = fields.List(fields.String(), data_key="contactIds")


class ConditionSchema(CompiledSchema):
    class Meta:
        ordered = True

    type = fields.String(attribute="condition_type")
    window_minutes = fields.Integer(data_key="windowMinutes")
    threshold = fields.Float()
    keywords = fields.List(fields.String())
    minimum_volume = fields.Integer(data_key="minimumVolume")


class RuleSchema(RecordSchema):
    name = fields.String()
    enabled = fields.Boolean()
    monitor_ids = fields.List(fields.String(), data_key="monitorIds")
    # The rule's condition columns, as one object.
    condition = fields.Function(lambda rule: _condition_schema.dump(rule))
    cooldown_minutes = fields.Integer(data_key="cooldownMinutes")
    severity = fields.String()
    contact_ids = fields.List(fields.String(), data_key="contactIds")
    last_tripped_at = UtcTimestamp(data_key="lastTrippedAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "enabled", "monitor_ids", "condition", "cooldown_minutes", "severity", "contact_ids",
                  "last_tripped_at", "livemode", "created_at", "updated_at")


_condition_schema = ConditionSchema()


class IncidentCreateSchema(_Input):
    title = fields.String(required=True)
    severity = fields.String(required=True)
    signal_ids = fields.List(fields.String(), data_key="signalIds")
    note = fields.String()


class IncidentUpdateSchema(_Input):
    status = fields.String(required=True)
    note = fields.String()


class TimelineEntrySchema(CompiledSchema):
    class Meta:
        ordered = True

    status = fields.String()
    note = fields.String(allow_none=True)
    # Stored as the contract writes a timestamp.
    at = fields.String()
    by = fields.String()


class IncidentSchema(RecordSchema):
    title = fields.String()
    severity = fields.String()
    status = fields.String()
    rule_id = fields.UUID(data_key="ruleId", allow_none=True)
    signal_ids = fields.List(fields.String(), data_key="signalIds")
    timeline = fields.List(fields.Nested(TimelineEntrySchema))
    opened_at = UtcTimestamp(data_key="openedAt")
    acknowledged_at = UtcTimestamp(data_key="acknowledgedAt", allow_none=True)
    resolved_at = UtcTimestamp(data_key="resolvedAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "title", "severity", "status", "rule_id", "signal_ids", "timeline", "opened_at",
                  "acknowledged_at", "resolved_at", "livemode", "created_at", "updated_at")


class ContactSchema(RecordSchema):
    name = fields.String()
    email = fields.String()
    phone = fields.String(allow_none=True)
    role = fields.String(allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "email", "phone", "role", "livemode", "created_at", "updated_at")


class OpenIncidentsSchema(CompiledSchema):
    class Meta:
        ordered = True

    total = fields.Integer()
    low = fields.Integer()
    medium = fields.Integer()
    high = fields.Integer()
    critical = fields.Integer()


class StatsSchema(CompiledSchema):
    class Meta:
        ordered = True

    period = fields.String()
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    open_incidents = fields.Nested(OpenIncidentsSchema, data_key="openIncidents")
    opened_in_period = fields.Integer(data_key="openedInPeriod")
    resolved_in_period = fields.Integer(data_key="resolvedInPeriod")
    mtta_seconds = fields.Float(data_key="mttaSeconds", allow_none=True)
    mttr_seconds = fields.Float(data_key="mttrSeconds", allow_none=True)
