"""Monitors through the API: saved with their keywords checked, listed, toggled,
capped per workspace and mode, and another workspace's or mode's never reached."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from persistence.listening import ListeningMonitor
from socialpub.listening import monitors as monitor_service
from tests.listening.factories import make_monitor
from tests.support.factories import make_key, make_workspace

URL = "/api/v1/listening/monitors"


def create(client, key, **body):
    return client.post(URL, headers=key.headers, json=body)


def created(client, key, **body) -> dict:
    response = create(client, key, **body)
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == URL
    return response.json()["data"]


def error_of(response, status: int, code: str = "validation_error") -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


def monitor_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(ListeningMonitor)).scalar_one()


class TestCreate:
    def test_saves_the_monitor(self, client, key):
        data = created(client, key, name="  Acme brand ", keywords=[" Acme ", "acme.com"],
                       requiredKeywords=["phone"], excludedKeywords=["acme anvils"],
                       platforms=["twitter", "mastodon"], languages=["en", "fr"])
        assert data["name"] == "Acme brand"
        assert data["keywords"] == ["Acme", "acme.com"] and data["requiredKeywords"] == ["phone"]
        assert data["excludedKeywords"] == ["acme anvils"]
        assert data["platforms"] == ["twitter", "mastodon"] and data["languages"] == ["en", "fr"]
        assert data["enabled"] is True and data["livemode"] is False
        assert data["lastPolledAt"] is None and data["lastError"] is None

    def test_required_keywords_alone_are_enough_and_it_may_start_paused(self, client, key):
        data = created(client, key, name="Battery", requiredKeywords=["acme", "battery"], enabled=False)
        assert data["keywords"] == [] and data["enabled"] is False
        assert data["platforms"] == [] and data["languages"] == []

    def test_a_keyword_repeated_is_kept_once(self, client, key):
        data = created(client, key, name="Dupes", keywords=["Acme", "ACME", "acme!", "Café", "cafe"])
        assert data["keywords"] == ["Acme", "Café"]

    @pytest.mark.parametrize("body, field", [
        ({"name": "No keywords"}, "keywords"),
        ({"name": "Empty", "keywords": [], "requiredKeywords": []}, "keywords"),
        ({"name": "Excluded only", "excludedKeywords": ["acme"]}, "keywords"),
        ({"name": " ", "keywords": ["acme"]}, "name"),
        ({"name": "Blank", "keywords": ["acme", "  "]}, "keywords[1]"),
        ({"name": "Long", "keywords": ["x" * 101]}, "keywords[0]"),
        ({"name": "Many", "keywords": [f"k{i}" for i in range(51)]}, "keywords"),
        ({"name": "Platform", "keywords": ["acme"], "platforms": ["myspace"]}, "platforms[0]"),
        ({"name": "Twice", "keywords": ["acme"], "platforms": ["twitter", "twitter"]}, "platforms"),
        ({"name": "Language", "keywords": ["acme"], "languages": ["EN"]}, "languages[0]"),
        ({"name": "Language", "keywords": ["acme"], "languages": ["xx"]}, "languages[0]"),
        ({"name": "Unknown", "keywords": ["acme"], "colour": "red"}, "colour"),
    ])
    def test_the_schema_refuses(self, client, session, key, body, field):
        error = error_of(create(client, key, **body), 422)
        assert field in [detail["field"] for detail in error["details"]], error
        assert monitor_count(session) == 0

    def test_a_keyword_without_a_letter_or_digit_is_refused_naming_it(self, client, session, key):
        error = error_of(create(client, key, name="Punct", keywords=["acme", "!!!"]), 422)
        assert error["details"] == [{"field": "keywords[1]", "message": error["message"]}]
        assert "could never match" in error["message"]
        assert monitor_count(session) == 0

    def test_a_keyword_both_wanted_and_excluded_is_refused(self, client, session, key):
        error = error_of(create(client, key, name="Both", requiredKeywords=["Acme"], excludedKeywords=["x", "ACME"]),
                         422)
        assert error["details"][0]["field"] == "excludedKeywords[1]" and "requiredKeywords" in error["message"]
        assert monitor_count(session) == 0

    def test_a_workspace_keeps_at_most_100_monitors_a_mode(self, client, session, workspace, key, live_key):
        for number in range(monitor_service.MAX_MONITORS - 1):
            make_monitor(session, workspace, name=f"Monitor {number}", enabled=number % 2 == 0)
        created(client, key, name="The hundredth", keywords=["acme"])
        error = error_of(create(client, key, name="One more", keywords=["acme"]), 409, "conflict")
        assert "at most 100" in error["message"]
        # The other mode has its own hundred.
        created(client, live_key, name="Live one", keywords=["acme"])
        assert monitor_count(session) == 101


class TestList:
    def test_newest_first_in_the_keys_mode_filtered_by_enabled(self, client, session, workspace, key):
        older = created(client, key, name="Older", keywords=["a"])
        newer = created(client, key, name="Newer", keywords=["b"], enabled=False)
        make_monitor(session, workspace, livemode=True, name="Live")
        make_monitor(session, make_workspace(session, name="Other"), name="Other's")
        body = client.get(URL, headers=key.headers).json()
        assert [m["id"] for m in body["data"]] == [newer["id"], older["id"]]
        assert body["pagination"]["totalItems"] == 2
        enabled = client.get(URL, headers=key.headers, params={"enabled": "true"}).json()
        assert [m["id"] for m in enabled["data"]] == [older["id"]]
        paused = client.get(URL, headers=key.headers, params={"enabled": "false", "limit": 1}).json()
        assert [m["id"] for m in paused["data"]] == [newer["id"]] and paused["pagination"]["totalItems"] == 1

    def test_reading_needs_listening_read(self, client, session, workspace):
        writer = make_key(session, workspace, scopes=["listening:write"])
        error_of(client.get(URL, headers=writer.headers), 403, "insufficient_scope")
        reader = make_key(session, workspace, scopes=["listening:read"])
        assert client.get(URL, headers=reader.headers).status_code == 200
        error_of(create(client, reader, name="X", keywords=["x"]), 403, "insufficient_scope")


class TestToggle:
    def test_pauses_then_resumes(self, client, key):
        monitor = created(client, key, name="Toggle", keywords=["acme"])
        paused = client.post(f"{URL}/{monitor['id']}/toggle", headers=key.headers)
        assert paused.status_code == 200 and paused.json()["data"]["enabled"] is False
        resumed = client.post(f"{URL}/{monitor['id']}/toggle", headers=key.headers)
        assert resumed.json()["data"]["enabled"] is True

    def test_another_workspaces_or_modes_monitor_is_not_found(self, client, session, workspace, key):
        live = make_monitor(session, workspace, livemode=True)
        other = make_monitor(session, make_workspace(session, name="Other"))
        for monitor in (live, other):
            error_of(client.post(f"{URL}/{monitor.id}/toggle", headers=key.headers), 404, "resource_not_found")
        session.expire_all()
        assert live.enabled is True and other.enabled is True
        error_of(client.post(f"{URL}/not-a-uuid/toggle", headers=key.headers), 404, "resource_not_found")
