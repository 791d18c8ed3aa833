"""Posting slots resolved to UTC on the real days the clocks change in 2027: a time the
clocks skip moves to the next valid minute, a time they repeat takes its first
occurrence."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub.calendar import slots
from tests.calendar.conftest import preferences, slot

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("zone", "day", "local", "expected_utc"),
    [
        # Europe/Berlin: 02:00 -> 03:00 on 28 March; 03:00 -> 02:00 on 31 October.
        ("Europe/Berlin", "2027-03-28", "02:30", "2027-03-28T01:00"),
        ("Europe/Berlin", "2027-03-28", "02:00", "2027-03-28T01:00"),
        ("Europe/Berlin", "2027-03-28", "01:59", "2027-03-28T00:59"),
        ("Europe/Berlin", "2027-03-28", "03:00", "2027-03-28T01:00"),
        ("Europe/Berlin", "2027-10-31", "02:30", "2027-10-31T00:30"),
        ("Europe/Berlin", "2027-10-31", "03:00", "2027-10-31T02:00"),
        # America/New_York: 02:00 -> 03:00 on 14 March; 02:00 -> 01:00 on 7 November.
        ("America/New_York", "2027-03-14", "02:15", "2027-03-14T07:00"),
        ("America/New_York", "2027-11-07", "01:30", "2027-11-07T05:30"),
        ("America/New_York", "2027-11-07", "00:59", "2027-11-07T04:59"),
        # Australia/Sydney: 03:00 -> 02:00 on 4 April; 02:00 -> 03:00 on 3 October.
        ("Australia/Sydney", "2027-04-04", "02:30", "2027-04-03T15:30"),
        ("Australia/Sydney", "2027-04-04", "03:00", "2027-04-03T17:00"),
        ("Australia/Sydney", "2027-10-03", "02:30", "2027-10-02T16:00"),
        ("Australia/Sydney", "2027-10-03", "01:59", "2027-10-02T15:59"),
    ],
)
def test_a_local_time_resolves_to_its_utc_instant(zone, day, local, expected_utc):
    resolved = slots.resolve(dt.date.fromisoformat(day), dt.time.fromisoformat(local), slots.zone(zone))
    assert resolved == dt.datetime.fromisoformat(expected_utc).replace(tzinfo=UTC)


def _open_slots(api, zone, weekday, time, since, until):
    assert api.put("/calendar/preferences", preferences(zone, [slot(weekday, time)])).status_code == 200
    response = api.get("/calendar/reservations", **{"from": since, "to": until})
    assert response.status_code == 200, response.text
    return response.json()["data"]


@pytest.mark.parametrize(
    ("zone", "weekday", "time", "gap_day", "gap_utc", "gap_local", "normal_utc"),
    [
        ("Europe/Berlin", "sunday", "02:30", "2027-03-28", "2027-03-28T01:00:00.000Z", "03:00", "2027-04-04T00:30:00.000Z"),
        ("America/New_York", "sunday", "02:30", "2027-03-14", "2027-03-14T07:00:00.000Z", "03:00", "2027-03-21T06:30:00.000Z"),
        ("Australia/Sydney", "sunday", "02:30", "2027-10-03", "2027-10-02T16:00:00.000Z", "03:00", "2027-10-09T15:30:00.000Z"),
    ],
)
def test_the_week_the_clocks_go_forward(api, zone, weekday, time, gap_day, gap_utc, gap_local, normal_utc):
    day = dt.date.fromisoformat(gap_day)
    view = _open_slots(api, zone, weekday, time, f"{day - dt.timedelta(days=2)}T00:00:00Z",
                       f"{day + dt.timedelta(days=8)}T00:00:00Z")
    assert view["timezone"] == zone
    assert [(s["startsAt"], s["localDate"], s["localTime"]) for s in view["openSlots"]] == [
        (gap_utc, gap_day, gap_local),
        (normal_utc, str(day + dt.timedelta(days=7)), time),
    ]
    assert {s["weekday"] for s in view["openSlots"]} == {weekday}


@pytest.mark.parametrize(
    ("zone", "time", "overlap_day", "first_utc", "week_after_utc"),
    [
        ("Europe/Berlin", "02:30", "2027-10-31", "2027-10-31T00:30:00.000Z", "2027-11-07T01:30:00.000Z"),
        ("America/New_York", "01:30", "2027-11-07", "2027-11-07T05:30:00.000Z", "2027-11-14T06:30:00.000Z"),
        ("Australia/Sydney", "02:30", "2027-04-04", "2027-04-03T15:30:00.000Z", "2027-04-10T16:30:00.000Z"),
    ],
)
def test_the_week_the_clocks_go_back_takes_the_first_occurrence(api, zone, time, overlap_day, first_utc, week_after_utc):
    day = dt.date.fromisoformat(overlap_day)
    view = _open_slots(api, zone, "sunday", time, f"{day - dt.timedelta(days=3)}T00:00:00Z",
                       f"{day + dt.timedelta(days=8)}T00:00:00Z")
    assert [(s["startsAt"], s["localTime"]) for s in view["openSlots"]] == [(first_utc, time), (week_after_utc, time)]


def test_slots_are_resolved_on_the_local_date_not_the_utc_one(api):
    # 08:00 on a Monday in Sydney is Sunday 21:00 UTC.
    view = _open_slots(api, "Australia/Sydney", "monday", "08:00", "2027-02-07T00:00:00Z", "2027-02-08T00:00:00Z")
    assert [(s["startsAt"], s["localDate"], s["weekday"]) for s in view["openSlots"]] == [
        ("2027-02-07T21:00:00.000Z", "2027-02-08", "monday")
    ]
