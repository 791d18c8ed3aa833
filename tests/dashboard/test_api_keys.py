"""Developers -> API keys: what create, roll and revoke do to the API, bad input
refused with nothing changed, and another workspace's keys out of reach."""
from __future__ import annotations

import re

from sqlalchemy import func, select

from persistence.keys import ApiKey
from tests.support.factories import make_key

VALUE = re.compile(r'id="new-key-value"[^>]*value="(svc_(?:test|live)_[0-9A-Za-z]+)"')


def shown_value(html: str) -> str:
    match = VALUE.search(html)
    assert match, "no key value on the page"
    return match.group(1)


def api_status(client, value: str) -> int:
    return client.get("/api/v1/posts", headers={"Authorization": f"Bearer {value}"}).status_code


def create(browser, **fields):
    data = {"name": "Scheduler", "mode": "test", "scopes": ["posts:read", "posts:write"], **fields}
    browser.get("/dashboard/developers/api-keys")
    return browser.post("/dashboard/developers/api-keys", data)


def key_count(session, workspace) -> int:
    return session.execute(select(func.count()).select_from(ApiKey).where(ApiKey.workspace_id == workspace.id)).scalar_one()


def test_created_key_works_and_its_value_is_shown_once(signed_in, client, session, workspace):
    response = create(signed_in, per_minute="30", per_day="500", expires_in_days="30")
    assert response.status_code == 200, response.text
    value = shown_value(response.text)
    assert value.startswith("svc_test_") and "shown only this once" in response.text
    assert api_status(client, value) == 200
    stored = session.execute(select(ApiKey).where(ApiKey.workspace_id == workspace.id, ApiKey.name == "Scheduler")).scalar_one()
    assert stored.scopes == ["posts:read", "posts:write"] and (stored.per_minute, stored.per_day) == (30, 500)
    assert stored.expires_at is not None and not stored.livemode
    listing = signed_in.get("/dashboard/developers/api-keys").text
    assert value not in listing and value[:13] + "…" in listing
    assert "posts:read, posts:write" in listing and "30 / min" in listing


def test_a_new_value_is_shown_after_a_redirect_and_reloading_neither_shows_nor_submits_again(signed_in, client, session, workspace):
    signed_in.get("/dashboard/developers/api-keys")
    data = {"name": "Scheduler", "mode": "test", "scopes": ["posts:read"]}
    posted = signed_in.post("/dashboard/developers/api-keys", data, follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"].endswith("/dashboard/developers/api-keys")
    shown = signed_in.get("/dashboard/developers/api-keys")
    value = shown_value(shown.text)
    # On its way to the page the value was in the session cookie, never in the clear.
    assert value not in posted.text and value not in posted.headers.get("set-cookie", "")
    assert value[len("svc_test_"):][:16] not in posted.headers.get("set-cookie", "")
    reloaded = signed_in.get("/dashboard/developers/api-keys").text
    assert value not in reloaded and "new-key-value" not in reloaded
    assert key_count(session, workspace) == 1

    key_id = re.search(r'data-key-id="([^"]+)"', reloaded).group(1)
    rolled = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "0"}, follow_redirects=False)
    assert rolled.status_code == 303
    new = shown_value(signed_in.get("/dashboard/developers/api-keys").text)
    assert "new-key-value" not in signed_in.get("/dashboard/developers/api-keys").text
    assert api_status(client, new) == 200 and api_status(client, value) == 401  # rolled once, not twice


def test_scope_checkboxes_are_grouped_by_area_with_labels(signed_in):
    html = signed_in.get("/dashboard/developers/api-keys").text
    for area in ("Posts", "Analytics", "Link in bio", "Media"):
        assert f"<legend>{area}</legend>" in html
    assert '<label for="scope-posts-publish">posts:publish</label>' in html


def test_live_key_and_scopes_are_enforced(signed_in, client):
    value = shown_value(create(signed_in, name="Reader", mode="live", scopes=["analytics:read"]).text)
    assert value.startswith("svc_live_")
    assert api_status(client, value) == 403  # posts:read is not among its scopes


def test_bad_input_is_refused_with_messages_and_changes_nothing(signed_in, session, workspace):
    before = key_count(session, workspace)
    cases = [
        ({"name": ""}, "Give the key a name."),
        ({"scopes": []}, "Choose at least one scope."),
        ({"scopes": ["posts:read", "root:all"]}, "is not a valid choice"),
        ({"per_minute": "5000"}, "between 1 and 1000"),
        ({"per_day": "0"}, "between 1 and 100000"),
        ({"per_minute": "lots"}, "Not a valid integer value"),
        ({"expires_in_days": "-3"}, "between 1 and 3650"),
        ({"mode": "prod"}, "Not a valid choice"),
        ({"name": "x" * 201}, "200"),
    ]
    for fields, message in cases:
        response = create(signed_in, **fields)
        assert response.status_code == 422, fields
        assert message in response.text, (fields, message)
        assert "Nothing was changed" in response.text
    assert key_count(session, workspace) == before


def test_roll_gives_a_new_value_and_ends_the_old_one(signed_in, client):
    old = shown_value(create(signed_in).text)
    key_id = re.search(r'data-key-id="([^"]+)"', signed_in.page).group(1)
    response = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "0"})
    assert response.status_code == 200
    new = shown_value(response.text)
    assert new != old
    assert api_status(client, new) == 200
    assert api_status(client, old) == 401


def test_roll_with_a_grace_period_keeps_the_old_value_working(signed_in, client):
    old = shown_value(create(signed_in).text)
    key_id = re.search(r'data-key-id="([^"]+)"', signed_in.page).group(1)
    response = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "24"})
    new = shown_value(response.text)
    assert "after 24 hours" in response.text
    assert api_status(client, old) == 200 and api_status(client, new) == 200
    bad = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "100000"})
    assert bad.status_code == 422 and api_status(client, new) == 200


def test_revoke_refuses_the_key(signed_in, client):
    value = shown_value(create(signed_in).text)
    key_id = re.search(r'data-key-id="([^"]+)"', signed_in.page).group(1)
    response = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/revoke", follow_redirects=True)
    assert response.status_code == 200 and "Revoked the key" in response.text
    assert api_status(client, value) == 401
    rolled = signed_in.post(f"/dashboard/developers/api-keys/{key_id}/roll", {"grace_hours": "0"})
    assert rolled.status_code == 409 and "revoked key cannot be rolled" in rolled.text


def test_another_workspaces_keys_are_out_of_reach(signed_in, client, session, other_workspace):
    theirs = make_key(session, other_workspace)
    listing = signed_in.get("/dashboard/developers/api-keys").text
    assert str(theirs.model.id) not in listing and theirs.value[:13] not in listing
    for action, data in (("roll", {"grace_hours": "0"}), ("revoke", {})):
        response = signed_in.post(f"/dashboard/developers/api-keys/{theirs.model.id}/{action}", data)
        assert response.status_code == 404, action
        assert response.headers["content-type"].startswith("text/html")
    assert api_status(client, theirs.value) == 200  # untouched
    assert signed_in.post("/dashboard/developers/api-keys/not-an-id/revoke", {}).status_code == 404
