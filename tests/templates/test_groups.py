"""Collections and hashtag sets changed and removed through the API: renamed under the
rule of unique names, a collection's templates left outside any when it goes, a hashtag
set's new tags appended from the next use and the set taken out of its templates when
it goes; another mode's or workspace's are 404; the paths beside /templates/{id}/use."""
from __future__ import annotations

import uuid

from persistence.templates import HashtagSet, Template, TemplateCollection
from tests.support.factories import make_key, make_workspace
from tests.templates.factories import make_collection, make_hashtag_set, make_template

COLLECTIONS = "/api/v1/templates/collections"
SETS = "/api/v1/templates/hashtags/sets"


def error_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


def fresh(session, model, record_id):
    session.expire_all()
    return session.get(model, record_id)


class TestCollections:
    def test_renames_and_describes_keeping_its_templates(self, client, session, key, workspace):
        collection = make_collection(session, workspace)
        make_template(session, workspace, collection_id=collection.id)
        response = client.patch(f"{COLLECTIONS}/{collection.id}", headers=key.headers,
                                json={"name": "  Winter  ", "description": "Cold days."})
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert data["name"] == "Winter" and data["description"] == "Cold days." and data["templateCount"] == 1
        cleared = client.patch(f"{COLLECTIONS}/{collection.id}", headers=key.headers, json={"description": None})
        assert cleared.json()["data"]["description"] is None and cleared.json()["data"]["name"] == "Winter"

    def test_a_name_another_collection_has_is_409_and_changes_nothing(self, client, session, key, workspace):
        make_collection(session, workspace, name="Taken")
        collection = make_collection(session, workspace, name="Mine")
        error_of(client.patch(f"{COLLECTIONS}/{collection.id}", headers=key.headers, json={"name": "Taken"}),
                 409, "conflict")
        assert fresh(session, TemplateCollection, collection.id).name == "Mine"

    def test_bad_bodies_are_422(self, client, session, key, workspace):
        collection = make_collection(session, workspace)
        for body in ({}, {"name": "   "}, {"colour": "red"}):
            error_of(client.patch(f"{COLLECTIONS}/{collection.id}", headers=key.headers, json=body),
                     422, "validation_error")

    def test_delete_leaves_its_templates_outside_any(self, client, session, key, workspace):
        collection_id = make_collection(session, workspace).id
        template_id = make_template(session, workspace, collection_id=collection_id).id
        response = client.delete(f"{COLLECTIONS}/{collection_id}", headers=key.headers)
        assert response.status_code == 200, response.text
        assert response.json()["data"] == {"id": str(collection_id), "deleted": True}
        assert fresh(session, TemplateCollection, collection_id) is None
        assert fresh(session, Template, template_id).collection_id is None
        error_of(client.delete(f"{COLLECTIONS}/{collection_id}", headers=key.headers), 404, "resource_not_found")

    def test_another_mode_or_workspace_is_404(self, client, session, key, workspace):
        live = make_collection(session, workspace, livemode=True, name="Live")
        other = make_collection(session, make_workspace(session), name="Theirs")
        for collection in (live, other):
            error_of(client.patch(f"{COLLECTIONS}/{collection.id}", headers=key.headers, json={"name": "Mine"}),
                     404, "resource_not_found")
            error_of(client.delete(f"{COLLECTIONS}/{collection.id}", headers=key.headers), 404, "resource_not_found")
            assert fresh(session, TemplateCollection, collection.id) is not None


class TestHashtagSets:
    def test_replaces_the_hashtags_normalised_and_the_next_use_appends_them(self, client, session, key, workspace):
        tags = make_hashtag_set(session, workspace)
        template = make_template(session, workspace, content="Fresh bread.", hashtag_set_ids=[str(tags.id)])
        response = client.patch(f"{SETS}/{tags.id}", headers=key.headers, json={"hashtags": ["#Bread", "bread", "rye"]})
        assert response.status_code == 200, response.text
        assert response.json()["data"]["hashtags"] == ["bread", "rye"]
        used = client.post(f"/api/v1/templates/{template.id}/use", headers=key.headers, json={})
        assert used.json()["data"]["hashtags"] == ["#bread", "#rye"]

    def test_refusals_change_nothing(self, client, session, key, workspace):
        make_hashtag_set(session, workspace, name="Taken")
        tags = make_hashtag_set(session, workspace, name="Mine")
        error_of(client.patch(f"{SETS}/{tags.id}", headers=key.headers, json={"name": "Taken"}), 409, "conflict")
        error = error_of(client.patch(f"{SETS}/{tags.id}", headers=key.headers, json={"hashtags": ["ok", "not ok"]}),
                         422, "validation_error")
        assert error["details"][0]["field"] == "hashtags[1]"
        error_of(client.patch(f"{SETS}/{tags.id}", headers=key.headers, json={"hashtags": [f"t{n}" for n in range(31)]}),
                 422, "validation_error")
        kept = fresh(session, HashtagSet, tags.id)
        assert kept.name == "Mine" and kept.hashtags == ["coffee", "latte"]

    def test_delete_takes_it_out_of_its_templates(self, client, session, key, workspace):
        gone = make_hashtag_set(session, workspace, name="Gone").id
        kept = make_hashtag_set(session, workspace, name="Kept").id
        template_id = make_template(session, workspace, hashtag_set_ids=[str(gone), str(kept)]).id
        response = client.delete(f"{SETS}/{gone}", headers=key.headers)
        assert response.status_code == 200, response.text
        assert response.json()["data"] == {"id": str(gone), "deleted": True}
        assert fresh(session, HashtagSet, gone) is None
        assert fresh(session, Template, template_id).hashtag_set_ids == [str(kept)]

    def test_another_mode_or_workspace_is_404(self, client, session, workspace):
        live_key = make_key(session, workspace, mode="live")
        test_set = make_hashtag_set(session, workspace)
        error_of(client.patch(f"{SETS}/{test_set.id}", headers=live_key.headers, json={"name": "X"}),
                 404, "resource_not_found")
        error_of(client.delete(f"{SETS}/{test_set.id}", headers=live_key.headers), 404, "resource_not_found")
        assert fresh(session, HashtagSet, test_set.id).name == "Coffee"


def test_the_collection_path_and_the_use_path_do_not_meet(client, session, key, workspace):
    # /templates/collections/use could read as either path; ids are UUIDs, so it is neither.
    assert client.post(f"{COLLECTIONS}/use", headers=key.headers, json={}).status_code in (404, 405)
    assert client.patch(f"{COLLECTIONS}/use", headers=key.headers, json={"name": "X"}).status_code in (404, 405, 422)
    template = make_template(session, workspace)
    assert client.post(f"/api/v1/templates/{template.id}/use", headers=key.headers, json={}).status_code == 200
    assert client.delete(f"{COLLECTIONS}/{uuid.uuid4()}", headers=key.headers).status_code == 404
