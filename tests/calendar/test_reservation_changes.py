"""A held reservation read, moved or edited (its holds follow it) and released; a
converted one stays as the post's history (409); the activity feed says who did what."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import select

from persistence.calendar import CalendarActivity, CalendarReservation, CalendarSlotHold
from tests.calendar.conftest import NOW, iso
from tests.support.factories import make_key, make_workspace

LATER = NOW + dt.timedelta(days=2)


def reserve(api, starts_at=LATER, platforms=("twitter",), title="Teaser") -> dict:
    response = api.post("/calendar/reservations",
                        {"startsAt": iso(starts_at), "platforms": list(platforms), "title": title})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def holds(session, reservation_id) -> set:
    session.expire_all()
    rows = session.execute(select(CalendarSlotHold).where(CalendarSlotHold.reservation_id == uuid.UUID(reservation_id)))
    return {(hold.minute.replace(tzinfo=dt.timezone.utc), hold.platform) for hold in rows.scalars()}


def converted(api) -> dict:
    reservation = reserve(api, starts_at=LATER + dt.timedelta(hours=5), title="Converted")
    response = api.post(f"/calendar/reservations/{reservation['id']}/convert", {"content": "Launch day."})
    assert response.status_code == 201, response.text
    return response.json()["data"]["reservation"]


def test_a_reservation_is_read_by_id(api):
    held = reserve(api)
    response = api.get(f"/calendar/reservations/{held['id']}")
    assert response.status_code == 200 and response.json()["data"] == held
    assert api.get(f"/calendar/reservations/{uuid.uuid4()}").status_code == 404


def test_moving_it_moves_its_holds_and_frees_the_old_minute(api, session):
    held = reserve(api, platforms=["twitter", "linkedin"])
    moved_to = LATER + dt.timedelta(hours=1)
    response = api.patch(f"/calendar/reservations/{held['id']}",
                         {"startsAt": iso(moved_to), "platforms": ["linkedin", "mastodon"], "title": "  Moved  "})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["startsAt"] == iso(moved_to) and data["platforms"] == ["linkedin", "mastodon"]
    assert data["title"] == "Moved" and data["status"] == "held" and data["note"] is None
    assert holds(session, held["id"]) == {(moved_to, "linkedin"), (moved_to, "mastodon")}
    # The old minute is free again; the new one is taken on its platforms.
    reserve(api, platforms=["twitter", "linkedin"], title="Old minute")
    clash = api.post("/calendar/reservations", {"startsAt": iso(moved_to), "platforms": ["mastodon"], "title": "X"})
    assert clash.status_code == 409


def test_adding_a_platform_at_the_same_minute_keeps_the_holds_it_had(api, session):
    held = reserve(api, platforms=["twitter"])
    response = api.patch(f"/calendar/reservations/{held['id']}", {"platforms": ["twitter", "linkedin"], "note": "N"})
    assert response.status_code == 200, response.text
    assert holds(session, held["id"]) == {(LATER, "twitter"), (LATER, "linkedin")}
    assert response.json()["data"]["note"] == "N"


def test_moving_onto_another_held_minute_is_409_and_changes_nothing(api, session):
    other = reserve(api, starts_at=LATER + dt.timedelta(hours=3), platforms=["twitter"], title="Other")
    held = reserve(api, platforms=["twitter"])
    response = api.patch(f"/calendar/reservations/{held['id']}", {"startsAt": other["startsAt"], "title": "Clash"})
    assert response.status_code == 409 and other["id"] in response.json()["error"]["message"]
    assert api.get(f"/calendar/reservations/{held['id']}").json()["data"] == held
    assert holds(session, held["id"]) == {(LATER, "twitter")}


def test_refused_changes_are_422(api):
    held = reserve(api)
    for body, field in (
        ({"startsAt": iso(NOW - dt.timedelta(minutes=1))}, "startsAt"),
        ({"title": "   "}, "title"),
        ({}, None),
        ({"colour": "red"}, None),
    ):
        response = api.patch(f"/calendar/reservations/{held['id']}", body)
        assert response.status_code == 422, (body, response.text)
        if field:
            assert response.json()["error"]["details"][0]["field"] == field
    assert api.get(f"/calendar/reservations/{held['id']}").json()["data"] == held


def test_releasing_frees_the_minute(api, session):
    held = reserve(api)
    response = api.delete(f"/calendar/reservations/{held['id']}")
    assert response.status_code == 200 and response.json()["data"] == {"id": held["id"], "deleted": True}
    session.expire_all()
    assert session.get(CalendarReservation, uuid.UUID(held["id"])) is None
    assert holds(session, held["id"]) == set()
    reserve(api, title="Same minute again")
    assert api.delete(f"/calendar/reservations/{held['id']}").status_code == 404


def test_a_converted_reservation_is_409_to_move_or_release(api):
    done = converted(api)
    for response in (api.patch(f"/calendar/reservations/{done['id']}", {"title": "New"}),
                     api.delete(f"/calendar/reservations/{done['id']}")):
        assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    assert api.get(f"/calendar/reservations/{done['id']}").json()["data"] == done


def test_the_activity_feed_says_who_moved_and_released(api, session):
    held = reserve(api)
    api.patch(f"/calendar/reservations/{held['id']}", {"startsAt": iso(LATER + dt.timedelta(hours=1))})
    api.delete(f"/calendar/reservations/{held['id']}")
    entries = {entry["type"]: entry for entry in api.get("/calendar/activity").json()["data"]}
    assert entries["reservation.updated"]["actor"] == "test key"
    assert entries["reservation.updated"]["previousScheduledAt"] == iso(LATER)
    assert entries["reservation.released"]["subject"] == {"type": "reservation", "id": held["id"]}
    only = api.get("/calendar/activity", type="reservation.released").json()["data"]
    assert [entry["type"] for entry in only] == ["reservation.released"]
    assert session.execute(select(CalendarActivity)).scalars().all()


def test_another_mode_or_workspace_is_404(api, client, session, workspace):
    held = reserve(api)
    for other in (make_key(session, workspace, mode="live"), make_key(session, make_workspace(session))):
        path = f"/api/v1/calendar/reservations/{held['id']}"
        assert client.get(path, headers=other.headers).status_code == 404
        assert client.patch(path, headers=other.headers, json={"title": "Theirs"}).status_code == 404
        assert client.delete(path, headers=other.headers).status_code == 404
    assert api.get(f"/calendar/reservations/{held['id']}").json()["data"] == held
