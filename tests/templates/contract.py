"""The templates area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from persistence.templates import Template
from tests.support.contract import RecordFactory, SuccessRequest
from tests.templates.factories import make_template

# The name and content the factory gives: a refused request must leave both as they were.
NAME, CONTENT = "Contract template", "Fresh {{special}} today."
VARIABLES = [{"name": "special", "required": False, "default": "bread", "description": None}]


def _template(session, workspace, livemode):
    return make_template(session, workspace, livemode=livemode, name=NAME, content=CONTENT, variables=VARIABLES).id


def _find_unchanged_template(session, template_id):
    template = session.get(Template, template_id)
    if template is None or template.name != NAME or template.content != CONTENT or template.usage_count != 0:
        return None
    return template


def _use_the_template(session, workspace):
    # The spec's example fills `special` for instagram; the factory's template has it.
    return SuccessRequest(body={"variables": {"special": "pumpkin soup"}, "platform": "instagram"})


RECORD_FACTORIES = {
    "templateId": RecordFactory(make=_template, find=_find_unchanged_template),
}

SUCCESS_REQUESTS = {
    "templates.use_template": _use_the_template,
}
