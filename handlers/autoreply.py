"""Handlers of the `autoreply` tag."""
from socialpub import envelope
from socialpub.autoreply import service as autoreply_service
from socialpub.autoreply.schemas import (
    ReplyTemplateSchema,
    RuleInputSchema,
    RuleSchema,
    RuleTestInputSchema,
    RuleTestResultSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_session, load

rule_schema = RuleSchema()
rule_input_schema = RuleInputSchema()
test_input_schema = RuleTestInputSchema()
test_result_schema = RuleTestResultSchema()
reply_template_schema = ReplyTemplateSchema()


def list_auto_reply_rules(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = autoreply_service.list_rules(
        session=current_session(), principal=current_principal(), limit=limit, offset=offset
    )
    return envelope.page(result, lambda rules: rule_schema.dump(rules, many=True))


def create_auto_reply_rule(body):
    fields = load(rule_input_schema, body)
    rule = autoreply_service.create_rule(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(rule_schema.dump(rule), location=f"{API_PREFIX}/auto-reply/rules/{rule.id}")


def update_auto_reply_rule(rule_id, body):
    fields = load(rule_input_schema, body, partial=True)
    rule = autoreply_service.update_rule(
        session=current_session(), principal=current_principal(), rule_id=rule_id, **fields
    )
    return envelope.ok(rule_schema.dump(rule))


def delete_auto_reply_rule(rule_id):
    deleted_id = autoreply_service.delete_rule(session=current_session(), principal=current_principal(), rule_id=rule_id)
    return envelope.deleted(deleted_id)


def test_auto_reply_rule(rule_id, body):
    fields = load(test_input_schema, body)
    result = autoreply_service.test_rule(
        session=current_session(), principal=current_principal(), rule_id=rule_id, **fields
    )
    return envelope.ok(test_result_schema.dump(result))


def list_reply_templates(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = autoreply_service.list_reply_templates(
        session=current_session(), principal=current_principal(), limit=limit, offset=offset
    )
    return envelope.page(result, lambda templates: reply_template_schema.dump(templates, many=True))
