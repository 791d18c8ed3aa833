"""Auto-reply rules through the API: triggers compiled with RE2 on save, replies
checked, listing in priority order, updates that change nothing when refused."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from persistence.autoreply import AutoReplyRule
from socialpub.autoreply import service
from socialpub.errors import ApiError
from tests.autoreply.factories import make_rule
from tests.templates.factories import make_template

URL = "/api/v1/auto-reply/rules"
RULE = {
    "name": "Prices",
    "trigger": {"keywords": ["price", "how much"]},
    "reply": {"text": "Thanks {{author}}! Prices are on our site."},
}


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
    assert error["details"][0]["field"] == field, error
    return error["message"]


def rule_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(AutoReplyRule)).scalar_one()


class TestCreate:
    def test_defaults(self, client, key):
        response = create(client, key)
        data = response.json()["data"]
        assert response.headers["location"] == f"{URL}/{data['id']}"
        assert data["enabled"] is True and data["priority"] == 100
        assert data["platforms"] == [] and data["messageTypes"] == ["comment", "mention"]
        assert data["trigger"] == {"keywords": ["price", "how much"], "match": "any", "excludeKeywords": [],
                                   "pattern": None}
        assert data["reply"] == {"text": "Thanks {{author}}! Prices are on our site.", "templateId": None}
        assert data["frequency"] == {"mode": "everyTime", "windowHours": None}

    def test_once_per_author_gets_a_window(self, client, key):
        data = created(client, key, frequency={"mode": "oncePerAuthor"})
        assert data["frequency"] == {"mode": "oncePerAuthor", "windowHours": 24}
        data = created(client, key, frequency={"mode": "oncePerAuthor", "windowHours": 2})
        assert data["frequency"]["windowHours"] == 2

    def test_a_pattern_re2_cannot_compile_is_refused(self, client, session, key):
        for pattern in ("(price", r"(a)\1", "(?<=a)b"):
            message = refused(create(client, key, trigger={"pattern": pattern}), "trigger.pattern")
            assert "RE2" in message
        assert rule_count(session) == 0

    def test_a_pattern_alone_is_a_trigger(self, client, key):
        data = created(client, key, trigger={"pattern": "(?i)pri(c|z)e"})
        assert data["trigger"]["pattern"] == "(?i)pri(c|z)e" and data["trigger"]["keywords"] == []

    def test_a_trigger_needs_keywords_or_a_pattern(self, client, key):
        refused(create(client, key, trigger={"match": "all"}), "trigger")
        refused(create(client, key, trigger={"keywords": ["  "]}), "trigger.keywords[0]")

    def test_a_reply_has_text_or_a_template_not_both(self, client, key):
        refused(create(client, key, reply={}), "reply")
        refused(create(client, key, reply={"text": "Hi", "templateId": "thanks"}), "reply")
        refused(create(client, key, reply={"text": "Hi {{name}}"}), "reply.text")
        assert "never closed" in refused(create(client, key, reply={"text": "Hi {{author"}), "reply.text")
        assert "never closed" in refused(create(client, key, reply={"text": "Hi {{author}} {{"}), "reply.text")
        assert "not a placeholder" in refused(create(client, key, reply={"text": "Hi {{author name}}"}), "reply.text")
        refused(create(client, key, reply={"templateId": "nope"}), "reply.templateId")

    def test_an_unclosed_placeholder_is_refused_at_once_and_saves_nothing(self, client, session, key):
        for text in ("Thanks {{author", "{{" * 1000, "{{" + " " * 1998, "{{author" * 250):
            started = time.perf_counter()
            assert "never closed" in refused(create(client, key, reply={"text": text}), "reply.text")
            assert time.perf_counter() - started < 2  # a linear scan: milliseconds
        assert rule_count(session) == 0

    def test_built_in_and_own_reply_templates_may_be_named(self, client, session, key, workspace):
        assert created(client, key, reply={"templateId": "thanks"})["reply"] == {"text": None, "templateId": "thanks"}
        own = make_template(session, workspace, name="Own", kind="reply", content="Cheers!")
        assert created(client, key, reply={"templateId": str(own.id)})["reply"]["templateId"] == str(own.id)
        content = make_template(session, workspace, name="Content", content="Not a reply")
        refused(create(client, key, reply={"templateId": str(content.id)}), "reply.templateId")

    def test_unknown_enum_values_are_refused(self, client, key):
        response = create(client, key, messageTypes=["email"])
        assert response.status_code == 422
        response = create(client, key, trigger={"keywords": ["a"], "match": "some"})
        assert response.status_code == 422


class TestListUpdateDelete:
    def test_listed_by_priority_then_age(self, client, session, key, workspace):
        make_rule(session, workspace, name="Late", priority=50)
        make_rule(session, workspace, name="First", priority=1)
        make_rule(session, workspace, name="Later", priority=50)
        listed = client.get(URL, headers=key.headers).json()
        assert [rule["name"] for rule in listed["data"]] == ["First", "Late", "Later"]
        assert listed["pagination"]["totalItems"] == 3

    def test_patch_changes_what_is_given(self, client, session, key, workspace):
        rule = make_rule(session, workspace)
        response = client.patch(f"{URL}/{rule.id}", headers=key.headers,
                                json={"enabled": False, "trigger": {"keywords": ["cost"], "match": "wholeWord"}})
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert data["enabled"] is False and data["trigger"]["keywords"] == ["cost"]
        assert data["trigger"]["match"] == "wholeWord" and data["name"] == "Prices"

    def test_a_refused_patch_changes_nothing(self, client, session, key, workspace):
        rule = make_rule(session, workspace)
        response = client.patch(f"{URL}/{rule.id}", headers=key.headers,
                                json={"enabled": False, "trigger": {"pattern": "(x"}})
        refused(response, "trigger.pattern")
        session.expire_all()
        assert session.get(AutoReplyRule, rule.id).enabled is True

    def test_a_patch_with_an_unclosed_placeholder_changes_nothing(self, client, session, key, workspace):
        rule = make_rule(session, workspace)
        response = client.patch(f"{URL}/{rule.id}", headers=key.headers,
                                json={"enabled": False, "reply": {"text": "Bye {{author"}})
        refused(response, "reply.text")
        session.expire_all()
        stored = session.get(AutoReplyRule, rule.id)
        assert stored.enabled is True and stored.reply_text == "Thanks {{author}}!"

    def test_delete(self, client, session, key, workspace):
        rule_id = make_rule(session, workspace).id
        response = client.delete(f"{URL}/{rule_id}", headers=key.headers)
        assert response.json()["data"] == {"id": str(rule_id), "deleted": True}
        assert rule_count(session) == 0
        assert client.delete(f"{URL}/{rule_id}", headers=key.headers).status_code == 404


class TestReplyTemplates:
    def test_built_ins_then_the_workspace_reply_templates(self, client, session, key, workspace):
        make_template(session, workspace, name="Zed", kind="reply", content="Bye {{author}}",
                      variables=[{"name": "author", "required": False, "default": None, "description": None}])
        make_template(session, workspace, name="Alpha", kind="reply", content="Hello")
        make_template(session, workspace, name="Not a reply", content="Post text")
        listed = client.get("/api/v1/auto-reply/templates", headers=key.headers).json()
        assert [t["id"] for t in listed["data"][:3]] == ["thanks", "support_handoff", "out_of_hours"]
        assert all(t["builtIn"] for t in listed["data"][:3])
        assert [(t["name"], t["builtIn"]) for t in listed["data"][3:]] == [("Alpha", False), ("Zed", False)]
        assert listed["pagination"]["totalItems"] == 5
        page = client.get("/api/v1/auto-reply/templates", headers=key.headers, params={"limit": 2, "offset": 2}).json()
        assert [t["name"] for t in page["data"]] == ["Out of hours", "Alpha"]
        assert page["pagination"]["hasNextPage"] is True
        last = client.get("/api/v1/auto-reply/templates", headers=key.headers, params={"limit": 2, "offset": 4}).json()
        assert [t["name"] for t in last["data"]] == ["Zed"]


BLANK_NAMES = ["   ", "\t", " \n\t ", "\u00a0"]


class TestNames:
    """A rule's name is trimmed, and a blank one refused, on create and on update."""

    @pytest.mark.parametrize("name", BLANK_NAMES)
    def test_a_blank_name_is_refused_and_nothing_is_stored(self, client, session, key, name):
        message = refused(create(client, key, name=name), "name")
        assert "blank" in message
        assert rule_count(session) == 0

    @pytest.mark.parametrize("name", BLANK_NAMES)
    def test_renaming_to_a_blank_name_is_refused_and_changes_nothing(self, client, session, key, workspace, name):
        rule = make_rule(session, workspace)
        refused(client.patch(f"{URL}/{rule.id}", headers=key.headers, json={"name": name}), "name")
        refused(client.patch(f"{URL}/{rule.id}", headers=key.headers, json={"name": name, "enabled": False}), "name")
        session.expire_all()
        stored = session.get(AutoReplyRule, rule.id)
        assert stored.name == "Prices" and stored.enabled is True

    def test_a_name_is_stored_trimmed(self, client, session, key):
        data = created(client, key, name=" Launch ")
        assert data["name"] == "Launch"
        response = client.patch(f"{URL}/{data['id']}", headers=key.headers, json={"name": "\tRelaunch  "})
        assert response.status_code == 200, response.text
        assert response.json()["data"]["name"] == "Relaunch"
        session.expire_all()
        assert session.execute(select(AutoReplyRule.name)).scalars().all() == ["Relaunch"]

    @pytest.mark.parametrize("name", BLANK_NAMES + [""])
    def test_the_service_refuses_a_blank_name_too(self, session, key, workspace, name):
        # What the CLI and the dashboard call, without the contract's schema in front.
        rule = make_rule(session, workspace)
        calls = (
            lambda: service.create_rule(session=session, principal=key.principal, name=name,
                                        trigger={"keywords": ["price"]}, reply={"text": "Thanks!"}),
            lambda: service.update_rule(session=session, principal=key.principal, rule_id=str(rule.id), name=name),
        )
        for call in calls:
            with pytest.raises(ApiError) as refusal:
                call()
            assert refusal.value.status == 422 and refusal.value.details[0]["field"] == "name"
        session.rollback()
        assert rule_count(session) == 1
        assert session.get(AutoReplyRule, rule.id).name == "Prices"
