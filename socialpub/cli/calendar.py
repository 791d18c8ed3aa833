"""`socialpub calendar list|show|release`: a workspace's slot reservations; releasing a
held one frees its minute (a converted one stays, as the post's history)."""
from __future__ import annotations

from persistence.calendar import CalendarReservation, ReservationStatus
from socialpub.calendar import reservations
from socialpub.calendar.schemas import ReservationSchema
from socialpub.cli.records import Action, Noun, by_service

NOUN = Noun(
    name="calendar", help="calendar slot reservations", model=CalendarReservation, resource="reservation",
    plural="reservations", list_records=reservations.recent_reservations,
    show_record=by_service(reservations.get_reservation, "reservation_id"),
    dump=ReservationSchema().dump, columns=("id", "livemode", "status", "startsAt", "platforms", "title", "createdBy"),
    list_arguments=((("--status",), {"choices": [status.value for status in ReservationStatus]}),),
    actions=(
        Action("release", "release a held reservation: its minute is free again",
               by_service(reservations.release_reservation, "reservation_id"), done="Released"),
    ),
)
register = NOUN.register
