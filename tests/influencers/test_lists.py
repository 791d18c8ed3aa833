"""Influencer lists: made the first time an influencer names one (ignoring case and
accents), listed by name with member counts by the API, renamed and removed by
operators."""
from __future__ import annotations

import pytest

from socialpub.errors import ApiError
from socialpub.influencers import lists, service
from tests.support.factories import OPERATOR, make_key


def add(client, key, name, handle, names):
    response = client.post("/api/v1/influencers", headers=key.headers,
                           json={"name": name, "handles": [{"platform": "instagram", "handle": handle}], "lists": names})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def listed(client, key, **params) -> list[tuple[str, int]]:
    response = client.get("/api/v1/influencers/lists", headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return [(each["name"], each["memberCount"]) for each in response.json()["data"]]


def test_naming_a_list_makes_it_once(client, session, workspace, key):
    add(client, key, "Ana", "ana", ["Food creators", "Spain"])
    bo = add(client, key, "Bo", "bo", ["FOOD CREATORS", "Nordic"])
    assert bo["lists"] == ["Food creators", "Nordic"]
    add(client, key, "Cy", "cy", [])
    assert listed(client, key) == [("Food creators", 2), ("Nordic", 1), ("Spain", 1)]
    assert listed(client, key, limit=1, offset=1) == [("Nordic", 1)]
    # Each mode has lists of its own.
    assert listed(client, make_key(session, workspace, mode="live")) == []


def test_accents_are_ignored_too(client, key):
    add(client, key, "Ana", "ana", ["Créateurs"])
    add(client, key, "Bo", "bo", ["createurs"])
    assert listed(client, key) == [("Créateurs", 2)]


def test_a_name_given_twice_counts_once(client, key):
    assert add(client, key, "Ana", "ana", ["Spain", "spain"])["lists"] == ["Spain"]


def test_operators_rename_and_remove_lists(client, session, workspace, key):
    add(client, key, "Ana", "ana", ["Food", "Spain"])
    [food, spain] = lists.workspace_lists(session=session, actor=OPERATOR, workspace_id=workspace.id)
    renamed = lists.rename_list(session=session, actor=OPERATOR, workspace_id=workspace.id, list_id=food.id,
                                name=" Food creators ")
    assert (renamed.name, renamed.member_count) == ("Food creators", 1)
    with pytest.raises(ApiError) as taken:
        lists.rename_list(session=session, actor=OPERATOR, workspace_id=workspace.id, list_id=food.id, name="SPAIN")
    assert taken.value.status == 409
    lists.delete_list(session=session, actor=OPERATOR, workspace_id=workspace.id, list_id=spain.id)
    assert listed(client, key) == [("Food creators", 1)]
    [ana] = service.workspace_influencers(session=session, actor=OPERATOR, workspace_id=workspace.id)
    assert ana.list_names == ["Food creators"]
    assert [each.name for each in service.workspace_influencers(
        session=session, actor=OPERATOR, workspace_id=workspace.id, list_name="food CREATORS")] == ["Ana"]
    with pytest.raises(ApiError) as missing:
        lists.delete_list(session=session, actor=OPERATOR, workspace_id=workspace.id, list_id=spain.id)
    assert missing.value.status == 404
