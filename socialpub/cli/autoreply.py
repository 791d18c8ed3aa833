"""`socialpub autoreply list|show|enable|disable`: a workspace's auto-reply rules."""
from __future__ import annotations

from persistence.autoreply import AutoReplyRule
from socialpub.autoreply import service
from socialpub.autoreply.schemas import RuleSchema
from socialpub.cli.records import Action, Noun, by_service, paged, scoped_get

NOUN = Noun(
    name="autoreply", help="auto-reply rules", model=AutoReplyRule, resource="auto-reply rule", plural="rules",
    list_records=paged(service.list_rules), show_record=scoped_get(AutoReplyRule, "auto-reply rule"),
    dump=RuleSchema().dump, columns=("id", "livemode", "enabled", "priority", "name", "platforms"),
    actions=(
        Action("enable", "enable a rule: it answers from now on", by_service(service.update_rule, "rule_id", enabled=True),
               done="Enabled"),
        Action("disable", "disable a rule: it answers nothing until enabled",
               by_service(service.update_rule, "rule_id", enabled=False), done="Disabled"),
    ),
)
register = NOUN.register
