"""The calendar's preferences (one document per workspace and mode) and its activity
feed. Reservations and comments have modules of their own."""
from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.calendar import CalendarActivity, CalendarPreferences
from socialpub.calendar import slots as slot_rules
from socialpub.calendar.activity import ACTIVITY_TYPES
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.posts.rules import check_platforms
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope, scoped

WEEK_STARTS = ("monday", "sunday")
VIEWS = ("month", "week", "day", "list")
MAX_SLOTS = 168

DEFAULTS = {
    "timezone": "UTC", "week_start": "monday", "default_view": "week", "slots": [],
    "working_hours_start": None, "working_hours_end": None,
}


def preferences_of(scope: TenantScope) -> CalendarPreferences:
    """The stored document, or (unsaved) the defaults a workspace starts with."""
    found = _stored(scope)
    if found is not None:
        return found
    return CalendarPreferences(workspace_id=scope.workspace_id, livemode=scope.livemode, **DEFAULTS)


@scoped
def get_preferences(scope: TenantScope) -> CalendarPreferences:
    return preferences_of(scope)


def replace_preferences(
    *, session: Session, principal: Principal, timezone: str, week_start: str, default_view: str, slots: list,
    working_hours: dict | None = None,
) -> CalendarPreferences:
    scope = TenantScope.of(session, principal)
    values = {
        "timezone": _check_time_zone(timezone),
        "week_start": _check_choice("week_start", week_start, WEEK_STARTS),
        "default_view": _check_choice("default_view", default_view, VIEWS),
        "slots": _check_slots(slots),
    }
    values["working_hours_start"], values["working_hours_end"] = _check_working_hours(working_hours)
    preferences = _stored(scope)
    if preferences is None:
        preferences = scope.add(CalendarPreferences(**values))
    else:
        for name, value in values.items():
            setattr(preferences, name, value)
    try:
        session.commit()
    except IntegrityError:
        # Two first saves at once: the other one made the document; this one replaces it.
        session.rollback()
        preferences = _stored(scope)
        for name, value in values.items():
            setattr(preferences, name, value)
        session.commit()
    return preferences


def _stored(scope: TenantScope) -> CalendarPreferences | None:
    return scope.session.execute(scope.select(CalendarPreferences)).scalar_one_or_none()


def _check_time_zone(name) -> str:
    """`UTC` or an IANA region zone (Area/Location); 422 naming `timezone` otherwise."""
    if not isinstance(name, str) or name not in slot_rules.accepted_time_zones():
        raise ApiError.field_invalid(
            "timezone", f"{name!r} is not a time zone a calendar can use: give an IANA region zone (Area/Location) "
                        "such as Europe/Berlin or America/Argentina/Buenos_Aires, or UTC.",
        )
    return name


def _check_choice(field: str, value, choices) -> str:
    if value not in choices:
        raise ApiError.field_invalid(field, f"{field} must be one of {', '.join(choices)}.")
    return value


def _check_time(field: str, value) -> str:
    try:
        parsed = slot_rules.parse_time(value)
    except (TypeError, ValueError):
        parsed = None
    if parsed is None or len(value) != 5 or value[2] != ":":
        raise ApiError.field_invalid(field, f"{field} must be a time of day as HH:MM, e.g. 09:30.")
    return value


def _check_slots(slots) -> list[dict]:
    slots = list(slots or [])
    if len(slots) > MAX_SLOTS:
        raise ApiError.field_invalid("slots", f"At most {MAX_SLOTS} slots.")
    checked, seen = [], set()
    for index, slot in enumerate(slots):
        where = f"slots[{index}]"
        weekday = _check_choice(f"{where}.weekday", slot.get("weekday"), slot_rules.WEEKDAYS)
        time = _check_time(f"{where}.time", slot.get("time"))
        if (weekday, time) in seen:
            raise ApiError.field_invalid(where, f"{weekday} {time} is named twice; give each slot once.")
        seen.add((weekday, time))
        try:
            platforms = check_platforms(slot.get("platforms"))
        except ApiError as exc:
            raise ApiError.field_invalid(f"{where}.platforms", exc.message) from None
        checked.append({"weekday": weekday, "time": time, "platforms": platforms})
    checked.sort(key=lambda s: (slot_rules.WEEKDAYS.index(s["weekday"]), s["time"]))
    return checked


def _check_working_hours(hours) -> tuple[str | None, str | None]:
    if hours is None:
        return None, None
    start = _check_time("working_hours.start", hours.get("start"))
    end = _check_time("working_hours.end", hours.get("end"))
    if end <= start:
        raise ApiError.field_invalid("working_hours.end", "workingHours.end must be after its start.")
    return start, end


def list_activity(
    *, session: Session, principal: Principal, type: str | None = None, limit: int = 20, offset: int = 0,
) -> Page:
    scope = TenantScope.of(session, principal)
    criteria = []
    if type is not None:
        _check_choice("query.type", type, ACTIVITY_TYPES)
        criteria.append(CalendarActivity.type == type)
    query = scope.select(CalendarActivity, *criteria).order_by(
        CalendarActivity.created_at.desc(), CalendarActivity.id.desc()
    )
    return paginate(session, query, total=scope.count_query(CalendarActivity, *criteria), limit=limit, offset=offset)
