"""The contract's shapes of auto-reply rules, their test and reply templates."""
from __future__ import annotations

from marshmallow import RAISE, fields

from socialpub.serialization import CompiledSchema, RecordSchema


class _Input(CompiledSchema):
    class Meta:
        unknown = RAISE


class TriggerInputSchema(_Input):
    keywords = fields.List(fields.String())
    match = fields.String()
    exclude_keywords = fields.List(fields.String(), data_key="excludeKeywords")
    pattern = fields.String(allow_none=True)


class ReplyInputSchema(_Input):
    text = fields.String()
    template_id = fields.String(data_key="templateId")


class FrequencyInputSchema(_Input):
    mode = fields.String()
    window_hours = fields.Integer(data_key="windowHours")


class RuleInputSchema(_Input):
    name = fields.String(required=True)
    enabled = fields.Boolean()
    priority = fields.Integer()
    platforms = fields.List(fields.String())
    message_types = fields.List(fields.String(), data_key="messageTypes")
    trigger = fields.Nested(TriggerInputSchema, required=True)
    reply = fields.Nested(ReplyInputSchema, required=True)
    frequency = fields.Nested(FrequencyInputSchema)


class TriggerSchema(CompiledSchema):
    class Meta:
        ordered = True

    keywords = fields.List(fields.String())
    match = fields.String()
    exclude_keywords = fields.List(fields.String(), data_key="excludeKeywords")
    pattern = fields.String(allow_none=True)


class RuleSchema(RecordSchema):
    name = fields.String()
    enabled = fields.Boolean()
    priority = fields.Integer()
    platforms = fields.List(fields.String())
    message_types = fields.List(fields.String(), data_key="messageTypes")
    trigger = fields.Nested(TriggerSchema)
    reply = fields.Function(lambda rule: {"text": rule.reply_text, "templateId": rule.reply_template_id})
    frequency = fields.Function(
        lambda rule: {"mode": rule.frequency_mode, "windowHours": rule.frequency_window_hours}
    )
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "enabled", "priority", "platforms", "message_types", "trigger", "reply", "frequency",
                  "livemode", "created_at", "updated_at")


class RuleTestInputSchema(_Input):
    text = fields.String(required=True)
    platform = fields.String(required=True)
    message_type = fields.String(data_key="messageType", required=True)
    author = fields.String(load_default=None)


class EvaluationSchema(CompiledSchema):
    class Meta:
        ordered = True

    rule_id = fields.UUID(data_key="ruleId")
    matched = fields.Boolean()
    reason = fields.String()


class RuleTestResultSchema(CompiledSchema):
    class Meta:
        ordered = True

    rule_id = fields.UUID(data_key="ruleId")
    matched = fields.Boolean()
    reason = fields.String()
    reply = fields.String(allow_none=True)
    answered_by = fields.UUID(data_key="answeredBy", allow_none=True)
    evaluations = fields.List(fields.Nested(EvaluationSchema))


class ReplyTemplateSchema(CompiledSchema):
    class Meta:
        ordered = True

    id = fields.String()
    name = fields.String()
    text = fields.String()
    built_in = fields.Boolean(data_key="builtIn")
