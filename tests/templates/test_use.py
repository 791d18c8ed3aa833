"""POST /templates/{templateId}/use: variables filled as plain text, hashtags within
each platform's limit, length checked, the use counted, and a post made by the rules
of POST /posts."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from persistence.posts import Post
from persistence.templates import Template
from socialpub import clock
from tests.support.factories import make_key
from tests.templates.factories import make_hashtag_set, make_template

VARIABLES = [
    {"name": "shop", "required": False, "default": "our café", "description": None},
    {"name": "dish", "required": True, "default": None, "description": None},
    {"name": "note", "required": False, "default": None, "description": None},
]


def use(client, key, template, **body):
    return client.post(f"/api/v1/templates/{template.id}/use", headers=key.headers, json=body)


def used(client, key, template, **body) -> dict:
    response = use(client, key, template, **body)
    # A use that makes a post answers 201 with the post's address; a fill alone, 200.
    if "createPost" in body:
        assert response.status_code == 201, response.text
        assert response.headers["Location"] == f"/api/v1/posts/{response.json()['data']['post']['id']}"
    else:
        assert response.status_code == 200, response.text
        assert "Location" not in response.headers
    return response.json()["data"]


def special(session, workspace, **fields) -> Template:
    values = dict(name="Special", content="Today at {{shop}}: {{dish}}. {{note}}", variables=VARIABLES)
    values.update(fields)
    return make_template(session, workspace, **values)


def post_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(Post)).scalar_one()


class TestFilling:
    def test_fills_values_and_defaults_and_leaves_no_gap(self, client, session, key, workspace):
        template = special(session, workspace)
        data = used(client, key, template, variables={"dish": "pumpkin soup"})
        assert data == {"content": "Today at our café: pumpkin soup.", "hashtags": []}

    def test_an_optional_variable_takes_its_connecting_word_with_it(self, client, session, key, workspace):
        template = make_template(session, workspace, name="Byline", content="{{title}} by {{author}}",
                                 variables=[{"name": "title", "required": True}, {"name": "author"}])
        assert used(client, key, template, variables={"title": "Soup"})["content"] == "Soup"
        assert used(client, key, template, variables={"title": "Soup", "author": "Bo"})["content"] == "Soup by Bo"

    def test_values_are_plain_text_never_placeholders(self, client, session, key, workspace):
        template = special(session, workspace)
        data = used(client, key, template, variables={"dish": "{{shop}} {{__import__}}", "shop": "Bo's"})
        assert data["content"] == "Today at Bo's: {{shop}} {{__import__}}."

    def test_a_missing_required_variable_is_refused_naming_it(self, client, session, key, workspace):
        template = special(session, workspace)
        for values in ({}, {"dish": "   "}):
            response = use(client, key, template, variables=values)
            assert response.status_code == 422, response.text
            assert response.json()["error"]["details"][0]["field"] == "variables.dish"
        session.expire_all()
        assert session.get(Template, template.id).usage_count == 0

    def test_a_value_for_an_unknown_variable_is_refused(self, client, session, key, workspace):
        template = special(session, workspace)
        response = use(client, key, template, variables={"dish": "soup", "dsih": "typo"})
        assert response.status_code == 422
        assert response.json()["error"]["details"][0]["field"] == "variables.dsih"

    def test_the_use_is_counted(self, client, session, key, workspace):
        template = special(session, workspace)
        used(client, key, template, variables={"dish": "soup"})
        used(client, key, template, variables={"dish": "stew"})
        session.expire_all()
        stored = session.get(Template, template.id)
        assert stored.usage_count == 2
        assert abs((stored.last_used_at - clock.now()).total_seconds()) < 60
        fetched = client.get(f"/api/v1/templates/{template.id}", headers=key.headers).json()["data"]
        assert fetched["usageCount"] == 2 and fetched["lastUsedAt"] is not None


class TestBound:
    def test_a_use_that_would_amplify_past_the_bound_is_refused_and_changes_nothing(self, client, session, key,
                                                                                 workspace):
        # About 1 KB sent and a 1 KB template, 200,000 characters asked for: refused
        # before the text is built.
        template = make_template(session, workspace, name="Amplifier", content="{{v}}" * 200,
                                 variables=[{"name": "v", "required": True, "default": None, "description": None}])
        response = use(client, key, template, variables={"v": "x" * 1000}, createPost={"platforms": ["facebook"]})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "validation_error" and error["details"][0]["field"] == "variables"
        assert "63,206" in error["message"] and len(response.content) < 2000
        session.expire_all()
        stored = session.get(Template, template.id)
        assert stored.usage_count == 0 and stored.last_used_at is None
        assert post_count(session) == 0

    def test_a_use_within_the_bound_is_filled(self, client, session, key, workspace):
        template = make_template(session, workspace, name="Repeat", content="{{v}}" * 12,
                                 variables=[{"name": "v", "required": True, "default": None, "description": None}])
        assert used(client, key, template, variables={"v": "x" * 5000})["content"] == "x" * 60_000


class TestHashtags:
    def test_sets_are_appended_in_order_deduplicated_within_the_platform_limit(self, client, session, key, workspace):
        first = make_hashtag_set(session, workspace, name="A", hashtags=["coffee", "latte", "oat"])
        second = make_hashtag_set(session, workspace, name="B", hashtags=["latte", "cafe", "beans", "roast", "fresh"])
        template = make_template(session, workspace, content="New beans!",
                                 hashtag_set_ids=[str(first.id), str(second.id)])
        everywhere = used(client, key, template)
        assert everywhere["hashtags"] == ["#coffee", "#latte", "#oat", "#cafe", "#beans", "#roast", "#fresh"]
        assert everywhere["content"] == "New beans!\n\n" + " ".join(everywhere["hashtags"])
        assert used(client, key, template, platform="instagram")["hashtags"] == [
            "#coffee", "#latte", "#oat", "#cafe", "#beans"]
        assert used(client, key, template, platform="threads")["hashtags"] == ["#coffee"]
        # one text for several platforms: the smallest limit
        data = used(client, key, template, createPost={"platforms": ["instagram", "threads", "linkedin"]})
        assert data["hashtags"] == ["#coffee"]

    def test_the_template_platforms_apply_when_none_is_named(self, client, session, key, workspace):
        tags = make_hashtag_set(session, workspace, hashtags=["a1", "b2"])
        template = make_template(session, workspace, content="Hi", platforms=["threads"], hashtag_set_ids=[str(tags.id)])
        assert used(client, key, template)["hashtags"] == ["#a1"]


class TestLength:
    def test_text_over_the_platform_limit_is_refused_naming_it(self, client, session, key, workspace):
        template = special(session, workspace)
        response = use(client, key, template, variables={"dish": "x" * 290}, platform="twitter")
        assert response.status_code == 422, response.text
        assert "twitter" in response.json()["error"]["message"]
        session.expire_all()
        assert session.get(Template, template.id).usage_count == 0


class TestCreatePost:
    def test_makes_a_draft(self, client, session, key, workspace):
        template = special(session, workspace)
        data = used(client, key, template, variables={"dish": "soup"}, createPost={"platforms": ["mastodon"]})
        assert data["post"]["status"] == "draft"
        assert data["post"]["content"] == data["content"] == "Today at our café: soup."
        assert data["post"]["platforms"] == ["mastodon"]

    def test_makes_a_scheduled_post_with_the_sandbox_accounts(self, client, session, key, workspace):
        template = special(session, workspace)
        when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)).isoformat()
        data = used(client, key, template, variables={"dish": "soup"},
                    createPost={"platforms": ["twitter"], "scheduledAt": when})
        assert data["post"]["status"] == "scheduled"

    def test_the_rules_of_posts_apply_and_nothing_changes_on_refusal(self, client, session, key, workspace):
        template = special(session, workspace)
        past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).isoformat()
        response = use(client, key, template, variables={"dish": "soup"},
                       createPost={"platforms": ["twitter"], "scheduledAt": past})
        assert response.status_code == 422, response.text
        assert response.json()["error"]["details"][0]["field"] == "scheduledAt"
        assert post_count(session) == 0
        assert session.get(Template, template.id).usage_count == 0

    def test_needs_posts_write_too(self, client, session, key, workspace):
        template = special(session, workspace)
        templates_only = make_key(session, workspace, scopes=["templates:read", "templates:write"])
        response = use(client, templates_only, template, variables={"dish": "soup"}, createPost={"platforms": ["twitter"]})
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "insufficient_scope"
        assert post_count(session) == 0
        assert used(client, templates_only, template, variables={"dish": "soup"})["content"]
