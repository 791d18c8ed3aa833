"""Templates through the API: placeholders checked on save, unique names, search,
collections with their counts, hashtag sets normalised."""
from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import func, select

from persistence.templates import HashtagSet, Template, TemplateCollection
from socialpub.errors import ApiError
from socialpub.templates import groups, service
from tests.support.factories import make_key, make_workspace
from tests.templates.factories import make_collection, make_template

URL = "/api/v1/templates"


def create(client, key, **body):
    return client.post(URL, headers=key.headers, json=body)


def created(client, key, **body) -> dict:
    response = create(client, key, **body)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def error_of(response, status: int, code: str = "validation_error") -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


def template_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(Template)).scalar_one()


class TestCreate:
    def test_saves_the_template_with_its_variables(self, client, key):
        data = created(client, key, name="Special", content="Today at {{shop}}: {{dish}}.",
                       variables=[{"name": "shop", "default": "our café"}, {"name": "dish", "required": True}],
                       platforms=["instagram"])
        assert data["name"] == "Special" and data["kind"] == "content"
        assert data["variables"] == [
            {"name": "shop", "required": False, "default": "our café", "description": None},
            {"name": "dish", "required": True, "default": None, "description": None},
        ]
        assert data["usageCount"] == 0 and data["lastUsedAt"] is None
        assert data["collectionId"] is None and data["hashtagSetIds"] == []

    def test_an_undeclared_placeholder_is_refused_naming_it(self, client, session, key):
        error = error_of(create(client, key, name="X", content="Hi {{name}} from {{city}}",
                                variables=[{"name": "name"}]), 422)
        assert "{{city}}" in error["message"] and error["details"][0]["field"] == "content"
        assert template_count(session) == 0

    def test_a_declared_variable_never_used_is_refused_naming_it(self, client, key):
        error = error_of(create(client, key, name="X", content="Hi {{name}}",
                                variables=[{"name": "name"}, {"name": "unused"}]), 422)
        assert "unused" in error["message"] and error["details"][0]["field"] == "variables[1].name"

    def test_a_malformed_placeholder_is_refused(self, client, key):
        error_of(create(client, key, name="X", content="Hi {{first-name}}"), 422)
        error_of(create(client, key, name="Y", content="Hi {{name"), 422)

    def test_an_unclosed_placeholder_is_refused_on_create_and_update(self, client, session, key):
        for content in ("Hi {{name", "Hi {{name}} {{", "{{ name }} }} {{"):
            error = error_of(create(client, key, name="X", content=content, variables=[{"name": "name"}]), 422)
            assert error["details"][0]["field"] == "content" and "never closed" in error["message"]
        assert template_count(session) == 0
        data = created(client, key, name="T", content="Hello {{name}}", variables=[{"name": "name"}])
        error = error_of(client.patch(f"{URL}/{data['id']}", headers=key.headers, json={"content": "Bye {{name"}), 422)
        assert error["details"][0]["field"] == "content"
        assert client.get(f"{URL}/{data['id']}", headers=key.headers).json()["data"]["content"] == "Hello {{name}}"

    @pytest.mark.parametrize("content", ["{{" * 31603, "{{" + " " * 63204, "{{a" * 21068, "{{ {{a }} }} {" * 4514])
    def test_a_63_kb_pathological_content_is_refused_at_once(self, client, session, key, content):
        started = time.perf_counter()
        error = error_of(create(client, key, name="X", content=content), 422)
        # The scan is linear (milliseconds); the quadratic one it replaced took over 30 s.
        assert time.perf_counter() - started < 2
        assert error["details"][0]["field"] == "content"
        assert template_count(session) == 0

    def test_a_63_kb_content_of_closing_braces_is_plain_text(self, client, key):
        started = time.perf_counter()
        assert created(client, key, name="X", content="}}" * 31603)["content"] == "}}" * 31603
        assert time.perf_counter() - started < 2

    def test_a_reply_template_may_use_only_author_and_platform(self, client, key):
        created(client, key, name="R", kind="reply", content="Thanks {{author}} on {{platform}}!",
                variables=[{"name": "author"}, {"name": "platform"}])
        error = error_of(create(client, key, name="R2", kind="reply", content="Hi {{shop}}",
                                variables=[{"name": "shop"}]), 422)
        assert "{{shop}}" in error["message"]

    def test_names_are_unique_per_workspace_and_mode(self, client, session, key, workspace):
        created(client, key, name="Same", content="One")
        error_of(create(client, key, name="Same", content="Two"), 409, "conflict")
        live = make_key(session, workspace, mode="live")
        created(client, live, name="Same", content="Live one")
        other = make_key(session, make_workspace(session, name="Other"))
        created(client, other, name="Same", content="Theirs")

    def test_an_unknown_collection_or_hashtag_set_is_refused(self, client, key):
        error = error_of(create(client, key, name="X", content="Hi", collectionId=str(uuid.uuid4())), 422)
        assert error["details"][0]["field"] == "collectionId"
        error = error_of(create(client, key, name="X", content="Hi", hashtagSetIds=[str(uuid.uuid4())]), 422)
        assert error["details"][0]["field"] == "hashtagSetIds[0]"

    def test_another_workspaces_collection_is_unknown(self, client, session, key):
        theirs = make_collection(session, make_workspace(session, name="Other"))
        error_of(create(client, key, name="X", content="Hi", collectionId=str(theirs.id)), 422)


class TestReadUpdateDelete:
    def test_get_patch_delete(self, client, key):
        data = created(client, key, name="T", content="Hello {{who}}", variables=[{"name": "who"}])
        url = f"{URL}/{data['id']}"
        assert client.get(url, headers=key.headers).json()["data"] == data
        changed = client.patch(url, headers=key.headers, json={"content": "Bye {{who}}!"})
        assert changed.status_code == 200, changed.text
        assert changed.json()["data"]["content"] == "Bye {{who}}!"
        # content and variables are checked together
        error_of(client.patch(url, headers=key.headers, json={"variables": []}), 422)
        deleted = client.delete(url, headers=key.headers)
        assert deleted.json()["data"] == {"id": data["id"], "deleted": True}
        error_of(client.get(url, headers=key.headers), 404, "resource_not_found")

    def test_an_id_that_is_not_a_uuid_is_not_found(self, client, key):
        error_of(client.get(f"{URL}/not-a-template", headers=key.headers), 404, "resource_not_found")

    def test_renaming_onto_a_taken_name_is_a_conflict(self, client, key):
        created(client, key, name="A", content="a")
        b = created(client, key, name="B", content="b")
        error_of(client.patch(f"{URL}/{b['id']}", headers=key.headers, json={"name": "A"}), 409, "conflict")


class TestSearch:
    def test_q_collection_platform_and_kind(self, client, session, key, workspace):
        seasonal = make_collection(session, workspace)
        make_template(session, workspace, name="Pumpkin", content="Soup season", platforms=["instagram"],
                      collection_id=seasonal.id)
        make_template(session, workspace, name="Coffee", content="New PUMPKIN latte", platforms=["threads"])
        make_template(session, workspace, name="Anywhere", content="For every platform")
        make_template(session, workspace, name="Thanks", content="Thanks {{author}}", kind="reply",
                      variables=[{"name": "author", "required": False, "default": None, "description": None}])

        def names(**params):
            response = client.get(URL, headers=key.headers, params=params)
            assert response.status_code == 200, response.text
            return sorted(t["name"] for t in response.json()["data"])

        assert names(q="pumpkin") == ["Coffee", "Pumpkin"]
        assert names(q="100%") == []
        assert names(collectionId=str(seasonal.id)) == ["Pumpkin"]
        assert names(platform="instagram") == ["Anywhere", "Pumpkin", "Thanks"]
        assert names(kind="reply") == ["Thanks"]
        assert names() == ["Anywhere", "Coffee", "Pumpkin", "Thanks"]

    @pytest.mark.parametrize("value", ["", "not-a-uuid"])
    def test_a_collection_id_that_is_not_one_is_422(self, client, key, value):
        response = client.get(URL, headers=key.headers, params={"collectionId": value})
        error_of(response, 422, "validation_error")


class TestCollections:
    def test_create_and_list_with_counts(self, client, session, key, workspace):
        response = client.post(f"{URL}/collections", headers=key.headers, json={"name": "Seasonal", "description": "Menus"})
        assert response.status_code == 201, response.text
        collection = response.json()["data"]
        assert collection["templateCount"] == 0 and collection["description"] == "Menus"
        created(client, key, name="In it", content="x", collectionId=collection["id"])
        listed = client.get(f"{URL}/collections", headers=key.headers).json()
        assert listed["data"][0]["templateCount"] == 1 and listed["pagination"]["totalItems"] == 1
        again = client.post(f"{URL}/collections", headers=key.headers, json={"name": "Seasonal"})
        error_of(again, 409, "conflict")


class TestHashtagSets:
    def test_stored_without_hash_lower_cased_and_once(self, client, key):
        response = client.post(f"{URL}/hashtags/sets", headers=key.headers,
                               json={"name": "Coffee", "hashtags": ["#Coffee", "coffee", "Oat_Milk", "latte2"]})
        assert response.status_code == 201, response.text
        assert response.json()["data"]["hashtags"] == ["coffee", "oat_milk", "latte2"]
        listed = client.get(f"{URL}/hashtags/sets", headers=key.headers).json()
        assert [s["name"] for s in listed["data"]] == ["Coffee"]

    def test_other_characters_and_more_than_thirty_are_refused(self, client, key):
        error = error_of(client.post(f"{URL}/hashtags/sets", headers=key.headers,
                                     json={"name": "Bad", "hashtags": ["ok", "not-ok"]}), 422)
        assert error["details"][0]["field"] == "hashtags[1]"
        error_of(client.post(f"{URL}/hashtags/sets", headers=key.headers,
                             json={"name": "Bad", "hashtags": ["#"]}), 422)
        many = [f"tag{n}" for n in range(31)]
        error = error_of(client.post(f"{URL}/hashtags/sets", headers=key.headers,
                                     json={"name": "Many", "hashtags": many}), 422)
        assert "30" in error["message"]
        # duplicates do not count twice
        fine = client.post(f"{URL}/hashtags/sets", headers=key.headers,
                           json={"name": "Thirty", "hashtags": many[:30] + ["TAG0"]})
        assert fine.status_code == 201, fine.text


BLANK_NAMES = ["   ", "\t", " \n\t ", "\u00a0"]
COLLECTIONS = f"{URL}/collections"
HASHTAG_SETS = f"{URL}/hashtags/sets"


def count_of(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model)).scalar_one()


def refused_name(response) -> None:
    error = error_of(response, 422)
    assert [detail["field"] for detail in error["details"]] == ["name"], error
    assert "blank" in error["details"][0]["message"]


class TestNames:
    """A name is trimmed; a blank one is refused; uniqueness is of the trimmed name."""

    @pytest.mark.parametrize("name", BLANK_NAMES)
    def test_a_blank_name_is_refused_everywhere_and_nothing_is_stored(self, client, session, key, name):
        refused_name(create(client, key, name=name, content="Hi"))
        refused_name(client.post(COLLECTIONS, headers=key.headers, json={"name": name}))
        refused_name(client.post(HASHTAG_SETS, headers=key.headers, json={"name": name, "hashtags": ["coffee"]}))
        assert count_of(session, Template) == 0
        assert count_of(session, TemplateCollection) == 0 and count_of(session, HashtagSet) == 0

    @pytest.mark.parametrize("name", BLANK_NAMES)
    def test_renaming_to_a_blank_name_is_refused_and_changes_nothing(self, client, key, name):
        data = created(client, key, name="Launch", content="Hi")
        url = f"{URL}/{data['id']}"
        refused_name(client.patch(url, headers=key.headers, json={"name": name}))
        refused_name(client.patch(url, headers=key.headers, json={"name": name, "content": "Changed"}))
        assert client.get(url, headers=key.headers).json()["data"] == data

    def test_names_are_stored_trimmed_and_compared_trimmed(self, client, session, key):
        data = created(client, key, name=" Launch ", content="Hi")
        assert data["name"] == "Launch"
        error = error_of(create(client, key, name=" Launch", content="Again"), 409, "conflict")
        assert "'Launch'" in error["message"]
        error = error_of(create(client, key, name="Launch\t", content="Again"), 409, "conflict")
        assert "'Launch'" in error["message"]
        other = created(client, key, name="Other", content="Other")
        error = error_of(client.patch(f"{URL}/{other['id']}", headers=key.headers, json={"name": "  Launch  "}),
                         409, "conflict")
        assert "'Launch'" in error["message"]
        # Its own name, spaced differently, is no change and no conflict.
        same = client.patch(f"{URL}/{data['id']}", headers=key.headers, json={"name": "\tLaunch "})
        assert same.status_code == 200 and same.json()["data"]["name"] == "Launch", same.text
        renamed = client.patch(f"{URL}/{other['id']}", headers=key.headers, json={"name": " Relaunch "})
        assert renamed.json()["data"]["name"] == "Relaunch"
        assert count_of(session, Template) == 2

    def test_collection_and_hashtag_set_names_are_stored_and_compared_trimmed(self, client, session, key):
        collection = client.post(COLLECTIONS, headers=key.headers, json={"name": " Launch "})
        assert collection.status_code == 201 and collection.json()["data"]["name"] == "Launch", collection.text
        error = error_of(client.post(COLLECTIONS, headers=key.headers, json={"name": " Launch"}), 409, "conflict")
        assert "'Launch'" in error["message"]
        hashtags = {"hashtags": ["launch"]}
        hashtag_set = client.post(HASHTAG_SETS, headers=key.headers, json={"name": " Launch ", **hashtags})
        assert hashtag_set.status_code == 201 and hashtag_set.json()["data"]["name"] == "Launch", hashtag_set.text
        error = error_of(client.post(HASHTAG_SETS, headers=key.headers, json={"name": " Launch", **hashtags}),
                         409, "conflict")
        assert "'Launch'" in error["message"]
        assert count_of(session, TemplateCollection) == 1 and count_of(session, HashtagSet) == 1

    @pytest.mark.parametrize("name", BLANK_NAMES + [""])
    def test_the_services_refuse_a_blank_name_too(self, session, key, name):
        # What the CLI and the dashboard call, without the contract's schema in front.
        for make in (
            lambda: service.create_template(session=session, principal=key.principal, name=name, content="Hi"),
            lambda: groups.create_collection(session=session, principal=key.principal, name=name),
            lambda: groups.create_hashtag_set(session=session, principal=key.principal, name=name, hashtags=["a"]),
        ):
            with pytest.raises(ApiError) as refused:
                make()
            assert refused.value.status == 422 and refused.value.details[0]["field"] == "name"
        session.rollback()
        assert count_of(session, Template) == 0
        assert count_of(session, TemplateCollection) == 0 and count_of(session, HashtagSet) == 0
