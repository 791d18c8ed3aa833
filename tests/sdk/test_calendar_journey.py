"""The content calendar through the generated client: set the preferences, find the
next free slots, reserve one, turn it into a post, comment on it, and read the
activity feed; and a reservation read, moved and released, not once converted."""
from __future__ import annotations

import datetime as dt

import pytest
from socialpub_client.api.calendar import (
    convert_reservation,
    create_calendar_comment,
    create_reservation,
    delete_reservation,
    get_calendar_preferences,
    get_reservation,
    list_calendar_activity,
    list_calendar_comments,
    list_reservations,
    replace_calendar_preferences,
    update_reservation,
)
from socialpub_client.models.activity_type_input import ActivityTypeInput
from socialpub_client.models.calendar_activity_list import CalendarActivityList
from socialpub_client.models.calendar_comment_input import CalendarCommentInput
from socialpub_client.models.calendar_comment_list import CalendarCommentList
from socialpub_client.models.calendar_comment_response import CalendarCommentResponse
from socialpub_client.models.calendar_preferences_input import CalendarPreferencesInput
from socialpub_client.models.calendar_preferences_response import CalendarPreferencesResponse
from socialpub_client.models.calendar_range_response import CalendarRangeResponse
from socialpub_client.models.calendar_view_input import CalendarViewInput
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.reservation_conversion_response import ReservationConversionResponse
from socialpub_client.models.reservation_convert_input import ReservationConvertInput
from socialpub_client.models.reservation_input import ReservationInput
from socialpub_client.models.reservation_response import ReservationResponse
from socialpub_client.models.reservation_update import ReservationUpdate
from socialpub_client.models.slot_input import SlotInput
from socialpub_client.models.week_start_input import WeekStartInput
from socialpub_client.models.weekday_input import WeekdayInput
from socialpub_client.models.working_hours import WorkingHours

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def _every_day(time: str) -> list[SlotInput]:
    return [SlotInput(weekday=day, time=time, platforms=[PlatformInput.TWITTER]) for day in WeekdayInput]


def test_reserve_the_next_free_slot_and_turn_it_into_a_post(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    wanted = CalendarPreferencesInput(
        timezone="Europe/Berlin", week_start=WeekStartInput.MONDAY, default_view=CalendarViewInput.WEEK,
        slots=_every_day("06:00") + _every_day("18:00"), working_hours=WorkingHours(start="09:00", end="18:00"),
    )
    stored = expect(replace_calendar_preferences.sync_detailed(client=client, body=wanted), 200,
                    CalendarPreferencesResponse).data
    assert stored.timezone == "Europe/Berlin" and len(stored.slots) == 14
    read = expect(get_calendar_preferences.sync_detailed(client=client), 200, CalendarPreferencesResponse).data
    assert read.to_dict() == stored.to_dict()
    wrong = CalendarPreferencesInput(timezone="Europe/Atlantis", week_start=WeekStartInput.MONDAY,
                                     default_view=CalendarViewInput.WEEK, slots=[])
    expect_error(replace_calendar_preferences.sync_detailed(client=client, body=wrong), 422, "validation_error")

    free = expect(list_reservations.sync_detailed(client=client, next_free=3), 200, CalendarRangeResponse).data
    assert len(free.open_slots) == 3 and free.timezone == "Europe/Berlin"
    soon = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=10)
    chosen = next(slot for slot in free.open_slots if slot.starts_at > soon)
    assert chosen.local_time in ("06:00", "18:00")

    reservation = expect(
        create_reservation.sync_detailed(client=client, body=ReservationInput(
            starts_at=chosen.starts_at, platforms=[PlatformInput.TWITTER], title="Launch teaser",
        )),
        201, ReservationResponse,
    ).data
    assert reservation.status == "held" and reservation.created_by == "sdk journeys"
    expect_error(
        create_reservation.sync_detailed(client=client, body=ReservationInput(
            starts_at=chosen.starts_at, platforms=[PlatformInput.TWITTER], title="Same minute",
        )),
        409, "conflict",
    )
    window = expect(
        list_reservations.sync_detailed(client=client, from_=chosen.starts_at,
                                        to=chosen.starts_at + dt.timedelta(minutes=1)),
        200, CalendarRangeResponse,
    ).data
    assert [r.id for r in window.reservations] == [reservation.id] and window.open_slots == []
    expect_error(list_reservations.sync_detailed(client=client, from_=chosen.starts_at), 422, "validation_error")

    conversion = expect(
        convert_reservation.sync_detailed(reservation.id, client=client,
                                          body=ReservationConvertInput(content="Launch day is here.")),
        201, ReservationConversionResponse,
    ).data
    assert conversion.post.status == "scheduled" and conversion.post.scheduled_at == chosen.starts_at
    assert conversion.reservation.status == "converted" and conversion.reservation.post_id == conversion.post.id
    expect_error(
        convert_reservation.sync_detailed(reservation.id, client=client, body=ReservationConvertInput(content="Again")),
        409, "conflict",
    )

    comment = expect(
        create_calendar_comment.sync_detailed(client=client, body=CalendarCommentInput(
            post_id=conversion.post.id, body="@dana the copy is final",
        )),
        201, CalendarCommentResponse,
    ).data
    assert comment.author == "sdk journeys" and comment.mentions == ["dana"]
    on_post = expect(list_calendar_comments.sync_detailed(client=client, post_id=conversion.post.id), 200,
                     CalendarCommentList)
    assert [c.id for c in on_post.data] == [comment.id]
    on_date = expect(
        create_calendar_comment.sync_detailed(client=client, body=CalendarCommentInput(
            date=chosen.local_date, body="Launch week",
        )),
        201, CalendarCommentResponse,
    ).data
    by_date = expect(list_calendar_comments.sync_detailed(client=client, from_=chosen.local_date, to=chosen.local_date),
                     200, CalendarCommentList)
    assert on_date.id in [c.id for c in by_date.data]

    converted = expect(
        list_calendar_activity.sync_detailed(client=client, type_=ActivityTypeInput.RESERVATION_CONVERTED), 200,
        CalendarActivityList,
    )
    assert converted.data[0].subject.id == reservation.id and converted.data[0].post_id == conversion.post.id
    feed = expect(list_calendar_activity.sync_detailed(client=client, limit=100), 200, CalendarActivityList)
    assert {"reservation.made", "post.created", "comment.added"} <= {entry.type_ for entry in feed.data}
    expect_error(
        list_calendar_activity.sync_detailed(client=sdk_server.client(sdk_server.keys.read_only)), 403,
        "insufficient_scope",
    )


def test_move_a_held_reservation_then_release_it(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    first = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=40)).replace(second=0, microsecond=0)
    held = expect(
        create_reservation.sync_detailed(client=client, body=ReservationInput(
            starts_at=first, platforms=[PlatformInput.LINKEDIN], title="Webinar slot",
        )),
        201, ReservationResponse,
    ).data
    read = expect(get_reservation.sync_detailed(held.id, client=client), 200, ReservationResponse).data
    assert read.to_dict() == held.to_dict()

    later = first + dt.timedelta(hours=2)
    moved = expect(
        update_reservation.sync_detailed(held.id, client=client, body=ReservationUpdate(
            starts_at=later, platforms=[PlatformInput.LINKEDIN, PlatformInput.MASTODON], note="Moved for the speaker",
        )),
        200, ReservationResponse,
    ).data
    assert moved.starts_at == later and moved.note == "Moved for the speaker" and moved.status == "held"
    # The old minute is free again: another reservation takes it.
    other = expect(
        create_reservation.sync_detailed(client=client, body=ReservationInput(
            starts_at=first, platforms=[PlatformInput.LINKEDIN], title="Old minute",
        )),
        201, ReservationResponse,
    ).data
    expect_error(
        update_reservation.sync_detailed(other.id, client=client, body=ReservationUpdate(starts_at=later)),
        409, "conflict",
    )
    expect_error(
        update_reservation.sync_detailed(held.id, client=client, body=ReservationUpdate(
            starts_at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1),
        )),
        422, "validation_error",
    )

    released = expect(delete_reservation.sync_detailed(held.id, client=client), 200, DeletedResponse).data
    assert released.id == held.id and released.deleted
    expect_error(get_reservation.sync_detailed(held.id, client=client), 404, "resource_not_found")

    conversion = expect(
        convert_reservation.sync_detailed(other.id, client=client, body=ReservationConvertInput(content="Webinar!")),
        201, ReservationConversionResponse,
    ).data
    expect_error(delete_reservation.sync_detailed(other.id, client=client), 409, "conflict")
    expect_error(
        update_reservation.sync_detailed(other.id, client=client, body=ReservationUpdate(title="Too late")),
        409, "conflict",
    )
    assert conversion.reservation.status == "converted"
    feed = expect(
        list_calendar_activity.sync_detailed(client=client, type_=ActivityTypeInput.RESERVATION_RELEASED), 200,
        CalendarActivityList,
    )
    assert feed.data[0].subject.id == held.id and feed.data[0].actor == "sdk journeys"
