"""Calendar preferences: defaults before any replacement, one document per workspace
and mode, refused whole when any part is wrong."""
from __future__ import annotations

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
