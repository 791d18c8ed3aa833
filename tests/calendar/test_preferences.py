"""Calendar preferences: defaults before any replacement, one document per workspace
and mode, refused whole when any part is wrong."""
from __future__ import annotations

import zoneinfo

import pytest

from socialpub.calendar import slots as slot_rules
from tests.calendar.conftest import NOW, iso, preferences, slot


def test_defaults_before_any_replacement(api):
    response = api.get("/calendar/preferences")
    assert response.status_code == 200
    assert response.json()["data"] == {
        "timezone": "UTC", "weekStart": "monday", "defaultView": "week", "slots": [], "workingHours": None,
        "livemode": False, "updatedAt": None,
    }


def test_a_replacement_is_the_whole_document(api):
    body = preferences("Europe/Berlin", [slot("thursday", "17:30", "twitter"), slot("monday", "09:00", "linkedin")],
                       weekStart="sunday", defaultView="month", workingHours={"start": "09:00", "end": "18:00"})
    response = api.put("/calendar/preferences", body)
    assert response.status_code == 200, response.text
    stored = api.get("/calendar/preferences").json()["data"]
    assert stored == response.json()["data"]
    assert stored["timezone"] == "Europe/Berlin" and stored["weekStart"] == "sunday" and stored["defaultView"] == "month"
    # Kept in week order.
    assert [s["weekday"] for s in stored["slots"]] == ["monday", "thursday"]
    assert stored["workingHours"] == {"start": "09:00", "end": "18:00"} and stored["updatedAt"] == iso(NOW)

    again = api.put("/calendar/preferences", preferences("Asia/Tokyo"))
    assert again.json()["data"]["slots"] == [] and again.json()["data"]["workingHours"] is None


def test_the_other_mode_has_its_own(api, client, live_key):
    api.put("/calendar/preferences", preferences("Europe/Berlin"))
    live = client.get("/api/v1/calendar/preferences", headers=live_key.headers).json()["data"]
    assert live["timezone"] == "UTC" and live["livemode"] is True


def test_bad_preferences_are_422_and_change_nothing(api):
    api.put("/calendar/preferences", preferences("Europe/Berlin", [slot("monday", "09:00")]))
    for body in (
        preferences("Mars/Olympus_Mons"),
        preferences("../../etc/passwd"),
        preferences("europe/berlin"),
        preferences("UTC", [slot("monday", "9:00")]),
        preferences("UTC", [slot("monday", "24:00")]),
        preferences("UTC", [slot("someday", "09:00")]),
        preferences("UTC", [slot("monday", "09:00"), slot("monday", "09:00", "linkedin")]),
        preferences("UTC", [{"weekday": "monday", "time": "09:00", "platforms": []}]),
        preferences("UTC", workingHours={"start": "18:00", "end": "09:00"}),
        preferences("UTC", weekStart="wednesday"),
        preferences("UTC", defaultView="year"),
        {"timezone": "UTC"},
        {**preferences("UTC"), "colour": "blue"},
    ):
        response = api.put("/calendar/preferences", body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["code"] == "validation_error"
    assert api.get("/calendar/preferences").json()["data"]["timezone"] == "Europe/Berlin"


def test_an_unknown_time_zone_names_the_field(api):
    response = api.put("/calendar/preferences", preferences("Europe/Atlantis"))
    assert response.json()["error"]["details"][0]["field"] == "timezone"


@pytest.mark.parametrize("name", [
    "Europe/Paris", "America/Argentina/Buenos_Aires", "Pacific/Auckland", "Antarctica/Troll", "Indian/Reunion", "UTC",
])
def test_region_zones_and_utc_are_accepted(api, name):
    response = api.put("/calendar/preferences", preferences(name))
    assert response.status_code == 200, response.text
    assert api.get("/calendar/preferences").json()["data"]["timezone"] == name


@pytest.mark.parametrize("name", [
    # What zoneinfo can load that is not a zone of a region: the host's own, a placeholder...
    "localtime", "Factory", "posixrules", "posix/Europe/Paris", "right/Europe/Paris", "posix/UTC",
    # ... the other spellings of UTC, the fixed offsets and the legacy names.
    "Etc/UTC", "GMT", "Zulu", "UCT", "Etc/GMT+5", "Etc/GMT-14", "US/Eastern", "EST5EDT", "EST", "Japan", "GB",
    # Near misses of a region zone.
    "Europe", "Europe/", "/Europe/Paris", "Europe//Paris", "Europe/Paris/", " Europe/Paris",
])
def test_anything_else_zoneinfo_might_load_is_422_and_changes_nothing(api, name):
    api.put("/calendar/preferences", preferences("Europe/Berlin"))
    response = api.put("/calendar/preferences", preferences(name))
    assert response.status_code == 422, (name, response.text)
    error = response.json()["error"]
    assert error["code"] == "validation_error" and error["details"][0]["field"] == "timezone"
    assert "region" in error["message"] and "UTC" in error["message"]
    assert api.get("/calendar/preferences").json()["data"]["timezone"] == "Europe/Berlin"


def test_every_accepted_zone_is_utc_or_an_area_location_zoneinfo_loads():
    accepted = slot_rules.accepted_time_zones()
    assert "UTC" in accepted and "Europe/Paris" in accepted and "America/Argentina/Buenos_Aires" in accepted
    for name in accepted - {"UTC"}:
        area, _, location = name.partition("/")
        assert area in slot_rules.REGION_AREAS and location, name
        zoneinfo.ZoneInfo(name)
    assert not accepted & {"localtime", "Factory", "posixrules", "Etc/UTC", "GMT", "US/Pacific"}
