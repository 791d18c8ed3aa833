"""The calendar area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import select

from persistence.calendar import CalendarReservation, CalendarSlotHold, ReservationStatus
from tests.support.contract import RecordFactory, SuccessRequest


def make_reservation(session, workspace, livemode: bool, *, starts_at: dt.datetime | None = None,
                     platforms=("twitter",), title: str = "Launch teaser") -> CalendarReservation:
    """A held reservation, as the service leaves one (with its minute's holds)."""
    starts_at = starts_at or dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0) + dt.timedelta(days=3)
    reservation = CalendarReservation(
        id=uuid.uuid4(), workspace_id=workspace.id, livemode=livemode, starts_at=starts_at, platforms=list(platforms),
        title=title, status=ReservationStatus.HELD, created_by="test key",
        holds=[
            CalendarSlotHold(workspace_id=workspace.id, livemode=livemode, minute=starts_at, platform=platform)
            for platform in platforms
        ],
    )
    session.add(reservation)
    session.commit()
    return reservation


def _reservation(session, workspace, livemode):
    return make_reservation(session, workspace, livemode).id


def _find_held_reservation(session, reservation_id):
    # Still held: a refused conversion must not have converted it.
    return session.execute(
        select(CalendarReservation).where(
            CalendarReservation.id == reservation_id, CalendarReservation.status == ReservationStatus.HELD,
            CalendarReservation.post_id.is_(None),
        )
    ).scalar_one_or_none()


RECORD_FACTORIES = {
    "reservationId": RecordFactory(make=_reservation, find=_find_held_reservation),
}

SUCCESS_REQUESTS = {
    # A calendar's range is required.
    "calendar.list_reservations": lambda session, workspace: SuccessRequest(
        query={"from": "2027-01-04T00:00:00Z", "to": "2027-01-11T00:00:00Z"}
    ),
}
