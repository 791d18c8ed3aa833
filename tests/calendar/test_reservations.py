"""Reservations: holding a minute on some platforms, the calendar's view of a range,
`nextFree`, and turning a reservation into a scheduled post."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select

from persistence.calendar import CalendarReservation
from persistence.posts import Post
from tests.calendar.conftest import NOW, iso, preferences, slot
from tests.calendar.contract import make_reservation
from tests.support.factories import make_key, make_workspace

UTC = dt.timezone.utc
LATER = NOW + dt.timedelta(days=2)


def reserve(api, starts_at=LATER, platforms=("twitter",), title="Teaser", **extra):
    return api.post("/calendar/reservations", {"startsAt": iso(starts_at), "platforms": list(platforms), "title": title,
                                               **extra})


def test_a_reservation_is_held_by_the_key_that_made_it(api):
    response = reserve(api, platforms=["twitter", "linkedin"], note="Check the visuals")
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert data["status"] == "held" and data["createdBy"] == "test key"
    assert data["startsAt"] == iso(LATER) and data["platforms"] == ["twitter", "linkedin"]
    assert data["postId"] is None and data["convertedAt"] is None and data["note"] == "Check the visuals"
    assert data["livemode"] is False
    location = response.headers["Location"]
    shown = api.get(location.removeprefix("/api/v1").split("?")[0],
                    **dict(part.split("=") for part in location.split("?")[1].split("&")))
    assert [r["id"] for r in shown.json()["data"]["reservations"]] == [data["id"]]


def test_a_time_in_the_past_is_422(api):
    response = reserve(api, starts_at=NOW - dt.timedelta(minutes=1))
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "startsAt"


def test_the_same_minute_on_a_shared_platform_is_409(api, session):
    assert reserve(api, platforms=["twitter", "linkedin"]).status_code == 201
    response = reserve(api, starts_at=LATER + dt.timedelta(seconds=40), platforms=["linkedin"])
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    assert "linkedin" in response.json()["error"]["message"]
    assert session.execute(select(func.count()).select_from(CalendarReservation)).scalar_one() == 1


def test_another_platform_or_minute_is_free(api):
    assert reserve(api, platforms=["twitter"]).status_code == 201
    assert reserve(api, platforms=["linkedin"]).status_code == 201
    assert reserve(api, starts_at=LATER + dt.timedelta(minutes=1), platforms=["twitter"]).status_code == 201


def test_the_other_mode_does_not_collide(api, client, session, workspace, live_key):
    assert reserve(api).status_code == 201
    live = client.post("/api/v1/calendar/reservations", headers=live_key.headers,
                       json={"startsAt": iso(LATER), "platforms": ["twitter"], "title": "Live"})
    assert live.status_code == 201


def test_a_bad_reservation_is_422(api):
    for body in (
        {"startsAt": iso(LATER), "platforms": [], "title": "x"},
        {"startsAt": iso(LATER), "platforms": ["myspace"], "title": "x"},
        {"startsAt": iso(LATER), "platforms": ["twitter"], "title": ""},
        {"startsAt": iso(LATER), "platforms": ["twitter"], "title": "x", "extra": 1},
        {"startsAt": "2027-02-01T09:00:00", "platforms": ["twitter"], "title": "x"},
    ):
        response = api.post("/calendar/reservations", body)
        assert response.status_code == 422, (body, response.text)


def test_the_range_shows_reservations_posts_and_open_slots(api, session, workspace):
    # Monday 2027-01-11 09:00 and 17:00 in Berlin (UTC+1).
    assert api.put("/calendar/preferences", preferences(
        "Europe/Berlin", [slot("monday", "09:00", "twitter", "linkedin"), slot("monday", "17:00", "twitter")]
    )).status_code == 200
    nine = dt.datetime(2027, 1, 11, 8, 0, tzinfo=UTC)
    five = dt.datetime(2027, 1, 11, 16, 0, tzinfo=UTC)
    held = reserve(api, starts_at=nine, platforms=["linkedin"]).json()["data"]
    post = api.post("/posts", {"content": "Due", "platforms": ["twitter"], "scheduledAt": iso(five)}).json()["data"]
    api.post("/posts", {"content": "A draft", "platforms": ["twitter"]})

    view = api.get("/calendar/reservations", **{"from": "2027-01-11T00:00:00+01:00", "to": "2027-01-12T00:00:00+01:00"})
    assert view.status_code == 200, view.text
    data = view.json()["data"]
    assert (data["from"], data["to"]) == ("2027-01-10T23:00:00.000Z", "2027-01-11T23:00:00.000Z")
    assert [r["id"] for r in data["reservations"]] == [held["id"]]
    assert [(p["id"], p["status"], p["scheduledAt"]) for p in data["scheduledPosts"]] == [
        (post["id"], "scheduled", iso(five))
    ]
    # 09:00 keeps twitter free; 17:00 has its only platform taken by the post.
    assert [(s["startsAt"], s["platforms"]) for s in data["openSlots"]] == [(iso(nine), ["twitter"])]


def test_a_bad_range_is_422(api):
    for params in (
        {},
        {"from": "2027-01-01T00:00:00Z"},
        {"to": "2027-01-01T00:00:00Z"},
        {"from": "2027-01-02T00:00:00Z", "to": "2027-01-01T00:00:00Z"},
        {"from": "2027-01-01T00:00:00Z", "to": "2027-04-04T00:00:01Z"},
        {"from": "2027-01-01T00:00:00", "to": "2027-01-02T00:00:00Z"},
        {"nextFree": 3, "from": "2027-01-01T00:00:00Z", "to": "2027-01-02T00:00:00Z"},
        {"nextFree": 0},
        {"nextFree": 51},
    ):
        response = api.get("/calendar/reservations", **params)
        assert response.status_code == 422, (params, response.text)
        assert response.json()["error"]["code"] == "validation_error"
    ninety_two = api.get("/calendar/reservations", **{"from": "2027-01-01T00:00:00Z", "to": "2027-04-03T00:00:00Z"})
    assert ninety_two.status_code == 200


def test_next_free_skips_taken_slots_and_the_past(api):
    assert api.put("/calendar/preferences", preferences(
        "UTC", [slot("monday", "07:00"), slot("monday", "09:00"), slot("tuesday", "09:00"), slot("wednesday", "09:00")]
    )).status_code == 200
    # Monday 07:00 has passed (now is 08:00); Tuesday 09:00 is reserved.
    assert reserve(api, starts_at=dt.datetime(2027, 1, 5, 9, 0, tzinfo=UTC)).status_code == 201
    data = api.get("/calendar/reservations", nextFree=3).json()["data"]
    assert [s["startsAt"] for s in data["openSlots"]] == [
        "2027-01-04T09:00:00.000Z", "2027-01-06T09:00:00.000Z", "2027-01-11T07:00:00.000Z",
    ]
    assert data["from"] == iso(NOW) and data["to"] == "2027-01-11T07:01:00.000Z"
    assert len(data["reservations"]) == 1


def test_next_free_without_slots_is_empty(api):
    data = api.get("/calendar/reservations", nextFree=5).json()["data"]
    assert data["openSlots"] == [] and data["timezone"] == "UTC"


def test_converting_schedules_the_post_at_the_reservation(api, session):
    reservation = reserve(api, platforms=["twitter", "mastodon"]).json()["data"]
    response = api.post(f"/calendar/reservations/{reservation['id']}/convert",
                        {"content": "Launch day", "firstComment": "Details inside"})
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    post = data["post"]
    assert response.headers["Location"] == f"/api/v1/posts/{post['id']}"
    assert (post["status"], post["scheduledAt"], post["platforms"]) == ("scheduled", iso(LATER), ["twitter", "mastodon"])
    assert post["firstComment"]["content"] == "Details inside"
    assert len(post["targets"]) == 2
    assert data["reservation"]["status"] == "converted" and data["reservation"]["postId"] == post["id"]
    assert data["reservation"]["convertedAt"] == iso(NOW)
    assert api.get(f"/posts/{post['id']}").json()["data"]["status"] == "scheduled"

    again = api.post(f"/calendar/reservations/{reservation['id']}/convert", {"content": "Launch day"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    assert session.execute(select(func.count()).select_from(Post)).scalar_one() == 1
    # Its minute is free again.
    assert reserve(api, platforms=["twitter"]).status_code == 201


def test_a_reservation_whose_time_passed_is_422_and_stays_held(api, now, session):
    reservation = reserve(api).json()["data"]
    now.advance((LATER - NOW).total_seconds() + 60)
    response = api.post(f"/calendar/reservations/{reservation['id']}/convert", {"content": "Too late"})
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "startsAt"
    session.expire_all()
    assert session.get(CalendarReservation, uuid.UUID(reservation["id"])).status == "held"


def test_content_refused_by_the_post_rules_leaves_the_reservation_held(api, session):
    reservation = reserve(api).json()["data"]
    response = api.post(f"/calendar/reservations/{reservation['id']}/convert", {"content": "x" * 281})
    assert response.status_code == 422 and "twitter" in response.json()["error"]["message"]
    comment_nowhere = reserve(api, platforms=["discord"], starts_at=LATER + dt.timedelta(hours=1)).json()["data"]
    refused = api.post(f"/calendar/reservations/{comment_nowhere['id']}/convert",
                       {"content": "Hi", "firstComment": "Replies?"})
    assert refused.status_code == 422
    session.expire_all()
    assert {r.status for r in session.execute(select(CalendarReservation)).scalars()} == {"held"}
    assert session.execute(select(func.count()).select_from(Post)).scalar_one() == 0


def test_another_workspace_reservation_is_404(api, session):
    other = make_workspace(session, name="Other")
    foreign = make_reservation(session, other, False, starts_at=LATER)
    response = api.post(f"/calendar/reservations/{foreign.id}/convert", {"content": "Mine?"})
    assert response.status_code == 404


def test_the_key_name_is_the_creator(client, session, workspace, now):
    named = make_key(session, workspace, scopes=["calendar:write"])
    named.model.name = "Dana's planner"
    session.commit()
    response = client.post("/api/v1/calendar/reservations", headers=named.headers,
                           json={"startsAt": iso(LATER), "platforms": ["twitter"], "title": "Hers"})
    assert response.json()["data"]["createdBy"] == "Dana's planner"


def test_times_at_the_ends_of_the_calendar_are_422(api):
    for params in (
        {"from": "9999-12-30T00:00:00Z", "to": "9999-12-31T23:59:59Z"},
        {"from": "0001-01-01T00:00:00+14:00", "to": "0001-01-02T00:00:00Z"},
        {"from": "0001-01-01T00:00:00Z", "to": "0001-01-02T00:00:00Z"},
    ):
        response = api.get("/calendar/reservations", **params)
        assert response.status_code == 422, (params, response.text)
    response = api.post("/calendar/reservations",
                        {"startsAt": "9999-12-31T23:59:59Z", "platforms": ["twitter"], "title": "Far"})
    assert response.status_code == 422 and response.json()["error"]["details"][0]["field"] == "startsAt"
