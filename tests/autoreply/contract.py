"""The autoreply area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from persistence.autoreply import AutoReplyRule
from tests.autoreply.factories import make_rule
from tests.support.contract import RecordFactory

NAME = "Contract rule"


def _rule(session, workspace, livemode):
    return make_rule(session, workspace, livemode=livemode, name=NAME, keywords=("price",)).id


def _find_unchanged_rule(session, rule_id):
    # A refused update must leave the rule as it was made.
    rule = session.get(AutoReplyRule, rule_id)
    if rule is None or rule.name != NAME or rule.enabled is not True or rule.trigger.get("keywords") != ["price"]:
        return None
    return rule


RECORD_FACTORIES = {
    "ruleId": RecordFactory(make=_rule, find=_find_unchanged_rule),
}
