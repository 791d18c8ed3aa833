"""Calendar: a week or a month of one mode as a grid of days in the workspace's time
zone (its calendar preferences), with the posts scheduled, the slots reserved and the
slots still open on each day, as the calendar service of the API finds them; a held
reservation is released from its day."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from flask import abort, render_template, request

from persistence.calendar import ReservationStatus
from socialpub import clock
from socialpub.calendar import reservations, slots
from socialpub.calendar import service as calendar
from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page

VIEWS = ("week", "month")
WEEK = dt.timedelta(days=7)


@dataclass
class Day:
    date: dt.date
    in_month: bool = True
    entries: list = field(default_factory=list)  # (local time, kind, record) by time


def _chosen(name: str, default, parse):
    value = request.args.get(name)
    if not value:
        return default
    try:
        return parse(value)
    except ValueError:
        abort(400, f"{name} is not valid: {value[:40]!r}.")


def _view(value: str) -> str:
    if value not in VIEWS:
        raise ValueError(value)
    return value


def _first_day(anchor: dt.date, view: str, week_start: str) -> tuple[dt.date, int]:
    """The first day the grid shows and how many days it shows (whole weeks)."""
    first_weekday = 0 if week_start == "monday" else 6
    if view == "week":
        return anchor - dt.timedelta(days=(anchor.weekday() - first_weekday) % 7), 7
    month_first = anchor.replace(day=1)
    start = month_first - dt.timedelta(days=(month_first.weekday() - first_weekday) % 7)
    next_month = (month_first + dt.timedelta(days=32)).replace(day=1)
    return start, -(-(next_month - start).days // 7) * 7


def _midnight(day: dt.date, tz) -> dt.datetime:
    return slots.resolve(day, dt.time(), tz).astimezone(dt.timezone.utc)


@member_page("/calendar/")
def calendar_page():
    scope = member_scope()
    preferences = calendar.get_preferences.in_scope(scope)
    tz = slots.zone(preferences.timezone)
    today = clock.now().astimezone(tz).date()
    view = _chosen("view", preferences.default_view if preferences.default_view in VIEWS else "week", _view)
    anchor = _chosen("date", today, dt.date.fromisoformat)
    if not reservations.FIRST_YEAR < anchor.year < reservations.LAST_YEAR:
        abort(400, f"date must fall after {reservations.FIRST_YEAR} and before {reservations.LAST_YEAR}.")
    start, length = _first_day(anchor, view, preferences.week_start)
    found = reservations.calendar_range.in_scope(scope, since=_midnight(start, tz),
                                                 until=_midnight(start + dt.timedelta(days=length), tz))
    days = {start + dt.timedelta(days=n): Day(start + dt.timedelta(days=n)) for n in range(length)}
    for day in days.values():
        day.in_month = view == "week" or day.date.month == anchor.month
    for post in found.scheduled_posts:
        local = post.scheduled_at.astimezone(tz)
        days[local.date()].entries.append((local.strftime("%H:%M"), "post", post))
    for reservation in found.reservations:
        local = reservation.starts_at.astimezone(tz)
        days[local.date()].entries.append((local.strftime("%H:%M"), "reservation", reservation))
    for slot in found.open_slots:
        days[slot.local_date].entries.append((slot.local_time, "open", slot))
    for day in days.values():
        day.entries.sort(key=lambda entry: (entry[0], ("post", "reservation", "open").index(entry[1])))
    weeks = [list(days.values())[index:index + 7] for index in range(0, length, 7)]
    if view == "week":
        before, after = anchor - WEEK, anchor + WEEK
    else:
        before = (anchor.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
        after = (anchor.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return render_template(
        "dashboard/calendar.html", weeks=weeks, view=view, anchor=anchor, today=today, before=before, after=after,
        timezone=preferences.timezone, held=ReservationStatus.HELD, mode=chosen_mode(),
        counts=dict(posts=len(found.scheduled_posts), reservations=len(found.reservations),
                    open=len(found.open_slots)),
    )


@member_page("/calendar/reservations/<reservation_id>/release", methods=["POST"])
def calendar_release(reservation_id):
    gone = reservations.release_reservation.in_scope(member_scope(), reservation_id=reservation_id)
    back = {name: request.args[name] for name in ("view", "date") if request.args.get(name)}
    return acted("reservation.released", "Released the reservation: its minute is free again.",
                 "dashboard.calendar_page", target_id=gone, back=back)
