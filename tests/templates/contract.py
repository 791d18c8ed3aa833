"""The templates area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from persistence.templates import HashtagSet, Template, TemplateCollection
from tests.support.contract import RecordFactory, SuccessRequest
from tests.templates.factories import make_collection, make_hashtag_set, make_template

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


def _collection(session, workspace, livemode):
    return make_collection(session, workspace, livemode=livemode, name="Contract collection").id


def _find_unchanged_collection(session, collection_id):
    collection = session.get(TemplateCollection, collection_id)
    return collection if collection is not None and collection.name == "Contract collection" else None


def _hashtag_set(session, workspace, livemode):
    return make_hashtag_set(session, workspace, livemode=livemode, name="Contract tags").id


def _find_unchanged_hashtag_set(session, set_id):
    hashtag_set = session.get(HashtagSet, set_id)
    if hashtag_set is None or hashtag_set.name != "Contract tags" or hashtag_set.hashtags != ["coffee", "latte"]:
        return None
    return hashtag_set


RECORD_FACTORIES = {
    "templateId": RecordFactory(make=_template, find=_find_unchanged_template),
    "collectionId": RecordFactory(make=_collection, find=_find_unchanged_collection),
    "setId": RecordFactory(make=_hashtag_set, find=_find_unchanged_hashtag_set),
}

SUCCESS_REQUESTS = {
    "templates.use_template": _use_the_template,
}
