"""Slot reservations and the calendar's view of a time range.

A reservation holds a minute on its platforms until it is turned into a post. Two held
reservations cannot share a platform within one minute: a row per (minute, platform)
under a unique constraint settles a race the service's own check cannot see.

A held reservation may be moved or edited (its holds follow it) or released
(removed); a converted one is the post's history and stays.

Converting creates the post through the posts service (`add_post`), under the rules
of `POST /posts`, in the conversion's one transaction: the reservation turns
`converted`, links its post, and the post's first comment (when given) is set, all in
one commit, so a reservation becomes a post once and nothing is half-done."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, noload

from persistence.calendar import CalendarReservation, CalendarSlotHold, ReservationStatus
from persistence.posts import Post, PostStatus
from socialpub import clock
from socialpub.calendar import slots as slot_rules
from socialpub.calendar.activity import record_activity
from socialpub.calendar.service import preferences_of
from socialpub.errors import ApiError
from socialpub.posts import service as posts
from socialpub.posts.rules import check_platforms
from socialpub.principal import Principal
from socialpub.publishing.first_comments import attach_first_comment
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import TenantScope, scoped

MAX_RANGE = dt.timedelta(days=92)
MAX_NEXT_FREE = 50
MAX_TITLE = 200
MAX_NOTE = 2000
ONE_MINUTE = dt.timedelta(minutes=1)
UNSET = object()
FIRST_YEAR, LAST_YEAR = 1900, 9998


@dataclass
class CalendarRange:
    since: dt.datetime
    until: dt.datetime
    timezone: str
    reservations: list
    scheduled_posts: list
    open_slots: list


@dataclass
class Conversion:
    reservation: CalendarReservation
    post: Post


def parse_moment(value, name: str) -> dt.datetime | None:
    moment = parse_timestamp(value, name)
    if moment is None:
        return None
    # Slots are resolved a day either side of a range, which must stay within the
    # years a date can hold.
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise ApiError.field_invalid(name, f"{name} must fall within the years {FIRST_YEAR} to {LAST_YEAR}.")
    return moment


# -- the view of a range ------------------------------------------------------------

@scoped
def calendar_range(scope: TenantScope, *, since=None, until=None, next_free: int | None = None) -> CalendarRange:
    """What a calendar draws for [since, until): its reservations, scheduled posts and
    open slots; both bounds are required. With
    `next_free`, the next that many open slots after now, and what lies until the last."""
    preferences = preferences_of(scope)
    tz = slot_rules.zone(preferences.timezone)
    now = clock.now()
    since, until = parse_moment(since, "query.from"), parse_moment(until, "query.to")
    if next_free is not None:
        if since is not None or until is not None:
            raise ApiError.field_invalid("query.nextFree", "nextFree looks ahead from now: leave out from and to.")
        if not 1 <= next_free <= MAX_NEXT_FREE:
            raise ApiError.field_invalid("query.nextFree", f"nextFree must be 1 to {MAX_NEXT_FREE}.")
        since, horizon = now, now + MAX_RANGE
        occupied = _occupied(scope, since, horizon)
        found = _open_slots(preferences.slots, tz, since, horizon, now, occupied)[:next_free]
        until = found[-1].starts_at + ONE_MINUTE if len(found) == next_free else horizon
    else:
        since, until = _checked_range(since, until, preferences, tz, now)
        occupied = _occupied(scope, since, until)
        found = _open_slots(preferences.slots, tz, since, until, now, occupied)
    return CalendarRange(
        since=since, until=until, timezone=preferences.timezone,
        reservations=[r for r in occupied.reservations if since <= r.starts_at < until],
        scheduled_posts=[p for p in occupied.posts if since <= p.scheduled_at < until],
        open_slots=found,
    )


def _checked_range(since, until, preferences, tz, now) -> tuple[dt.datetime, dt.datetime]:
    if since is None or until is None:
        missing = "query.from" if since is None else "query.to"
        raise ApiError.field_invalid(missing, "from and to are required (or nextFree, for the next open slots).")
    if until <= since:
        raise ApiError.field_invalid("query.to", "to must be after from.")
    if until - since > MAX_RANGE:
        raise ApiError.field_invalid("query.to", f"The range may span at most {MAX_RANGE.days} days.")
    return since, until


@dataclass
class _Occupied:
    reservations: list
    posts: list
    # {minute: {platform, ...}} taken by a held reservation or a scheduled post.
    taken: dict


def _occupied(scope: TenantScope, since: dt.datetime, until: dt.datetime) -> _Occupied:
    reservations = list(scope.session.execute(
        scope.select(CalendarReservation, CalendarReservation.starts_at >= since, CalendarReservation.starts_at < until)
        .order_by(CalendarReservation.starts_at, CalendarReservation.created_at)
    ).scalars())
    scheduled = list(scope.session.execute(
        scope.select(
            Post, Post.status == PostStatus.SCHEDULED, Post.archived_at.is_(None),
            Post.scheduled_at >= since, Post.scheduled_at < until,
        ).options(noload(Post.targets), noload(Post.first_comment)).order_by(Post.scheduled_at, Post.created_at)
    ).scalars())
    taken: dict = {}
    for reservation in reservations:
        if reservation.status == ReservationStatus.HELD:
            taken.setdefault(slot_rules.minute_of(reservation.starts_at), set()).update(reservation.platforms)
    for post in scheduled:
        taken.setdefault(slot_rules.minute_of(post.scheduled_at), set()).update(post.platforms)
    return _Occupied(reservations, scheduled, taken)


def _open_slots(slots, tz, since, until, now, occupied: _Occupied) -> list[slot_rules.OpenSlot]:
    found = []
    for instant, day, slot in slot_rules.slot_instants(slots, tz, max(since, now), until):
        if instant <= now:
            continue
        taken = occupied.taken.get(slot_rules.minute_of(instant), set())
        free = [platform for platform in slot["platforms"] if platform not in taken]
        if free:
            local = instant.astimezone(tz)
            found.append(slot_rules.OpenSlot(
                starts_at=instant, local_date=day, local_time=local.strftime("%H:%M"),
                weekday=slot_rules.WEEKDAYS[local.weekday()], platforms=free,
            ))
    return found


# -- reservations -------------------------------------------------------------------

def create_reservation(
    *, session: Session, principal: Principal, starts_at: dt.datetime, platforms, title: str, note: str | None = None,
) -> CalendarReservation:
    scope = TenantScope.of(session, principal)
    platforms = check_platforms(platforms)
    title = (title or "").strip()
    if not title or len(title) > MAX_TITLE:
        raise ApiError.field_invalid("title", f"title must be 1 to {MAX_TITLE} characters.")
    if note is not None and len(note) > MAX_NOTE:
        raise ApiError.field_invalid("note", f"note must be at most {MAX_NOTE} characters.")
    starts_at = parse_moment(starts_at, "starts_at")
    if starts_at <= clock.now():
        raise ApiError.field_invalid("starts_at", "startsAt must be in the future.")
    minute = slot_rules.minute_of(starts_at)
    _refuse_overlap(scope, minute, platforms)
    reservation = scope.add(CalendarReservation(
        id=uuid.uuid4(), starts_at=starts_at, platforms=platforms, title=title, note=note,
        status=ReservationStatus.HELD, created_by=scope.actor.name,
        holds=[
            CalendarSlotHold(workspace_id=scope.workspace_id, livemode=scope.livemode, minute=minute, platform=platform)
            for platform in platforms
        ],
    ))
    record_activity(
        session, workspace_id=scope.workspace_id, livemode=scope.livemode, type="reservation.made",
        subject_type="reservation", subject_id=reservation.id, summary=title, actor=reservation.created_by,
        scheduled_at=starts_at,
    )
    _commit_holds(session, minute)
    return reservation


def _refuse_overlap(scope: TenantScope, minute: dt.datetime, platforms: list[str], besides=None) -> None:
    held = scope.session.execute(scope.select(
        CalendarReservation, CalendarReservation.status == ReservationStatus.HELD,
        CalendarReservation.starts_at >= minute, CalendarReservation.starts_at < minute + ONE_MINUTE,
        *([CalendarReservation.id != besides] if besides is not None else []),
    )).scalars()
    for other in held:
        shared = [platform for platform in platforms if platform in other.platforms]
        if shared:
            raise ApiError.conflict(
                f"Reservation '{other.id}' already holds {minute:%Y-%m-%dT%H:%MZ} on {', '.join(shared)}."
            )


def recent_reservations(*, scope: TenantScope, status: str | None = None, limit: int = 20) -> list[CalendarReservation]:
    """Reservations newest first, held or converted or only those of `status` (the
    operator's listing; the API's view is by time range)."""
    session = scope.session
    criteria = [] if status is None else [CalendarReservation.status == status]
    query = scope.select(CalendarReservation, *criteria).order_by(
        CalendarReservation.created_at.desc(), CalendarReservation.id.desc()
    )
    return list(session.execute(query.limit(limit)).scalars())


@scoped
def get_reservation(scope: TenantScope, *, reservation_id) -> CalendarReservation:
    return scope.get(CalendarReservation, reservation_id, resource="reservation")


def update_reservation(
    *, session: Session, principal: Principal, reservation_id, starts_at=UNSET, platforms=UNSET, title=UNSET,
    note=UNSET,
) -> CalendarReservation:
    """Moves or edits a held reservation; the (minute, platform) holds follow it, those
    it keeps untouched, so the unique constraint sees only what changes."""
    scope = TenantScope.of(session, principal)
    reservation = scope.get(CalendarReservation, reservation_id, resource="reservation", for_update=True)
    _refuse_converted(reservation, "change the post instead")
    if title is not UNSET:
        title = (title or "").strip()
        if not title or len(title) > MAX_TITLE:
            raise ApiError.field_invalid("title", f"title must be 1 to {MAX_TITLE} characters.")
        reservation.title = title
    if note is not UNSET:
        if note is not None and len(note) > MAX_NOTE:
            raise ApiError.field_invalid("note", f"note must be at most {MAX_NOTE} characters.")
        reservation.note = note
    previous = reservation.starts_at
    if starts_at is not UNSET:
        starts_at = parse_moment(starts_at, "starts_at")
        if starts_at <= clock.now():
            raise ApiError.field_invalid("starts_at", "startsAt must be in the future.")
        reservation.starts_at = starts_at
    if platforms is not UNSET:
        reservation.platforms = check_platforms(platforms)
    minute = slot_rules.minute_of(reservation.starts_at)
    wanted = {(minute, platform) for platform in reservation.platforms}
    if wanted != {(hold.minute, hold.platform) for hold in reservation.holds}:
        _refuse_overlap(scope, minute, list(reservation.platforms), besides=reservation.id)
        for hold in [hold for hold in reservation.holds if (hold.minute, hold.platform) not in wanted]:
            reservation.holds.remove(hold)
        kept = {(hold.minute, hold.platform) for hold in reservation.holds}
        reservation.holds.extend(
            CalendarSlotHold(workspace_id=reservation.workspace_id, livemode=reservation.livemode, minute=m, platform=p)
            for m, p in sorted(wanted - kept)
        )
    record_activity(
        session, workspace_id=reservation.workspace_id, livemode=reservation.livemode, type="reservation.updated",
        subject_type="reservation", subject_id=reservation.id, summary=reservation.title, actor=scope.actor.name,
        scheduled_at=reservation.starts_at,
        previous_scheduled_at=previous if previous != reservation.starts_at else None,
    )
    _commit_holds(session, minute)
    return reservation


@scoped
def release_reservation(scope: TenantScope, *, reservation_id) -> str:
    """Removes a held reservation: its minute is free on its platforms again."""
    session = scope.session
    reservation = scope.get(CalendarReservation, reservation_id, resource="reservation", for_update=True)
    _refuse_converted(reservation, "delete the post instead")
    identifier = str(reservation.id)
    record_activity(
        session, workspace_id=reservation.workspace_id, livemode=reservation.livemode, type="reservation.released",
        subject_type="reservation", subject_id=reservation.id, summary=reservation.title, actor=scope.actor.name,
        scheduled_at=reservation.starts_at,
    )
    session.delete(reservation)
    session.commit()
    return identifier


def _refuse_converted(reservation: CalendarReservation, instead: str) -> None:
    if reservation.status != ReservationStatus.HELD:
        raise ApiError.conflict(
            f"The reservation was already converted into post '{reservation.post_id}'; {instead}."
        )


def _commit_holds(session: Session, minute: dt.datetime) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError.conflict(
            f"Another reservation was made for {minute:%Y-%m-%dT%H:%MZ} on one of these platforms just now."
        ) from None


def convert_reservation(
    *, session: Session, principal: Principal, reservation_id, content: str, first_comment: str | None = None,
) -> Conversion:
    scope = TenantScope.of(session, principal)
    reservation = scope.get(CalendarReservation, reservation_id, resource="reservation", for_update=True)
    _refuse_converted(reservation, "it becomes a post once")
    if reservation.starts_at <= clock.now():
        raise ApiError.field_invalid(
            "starts_at", "The reservation's startsAt has passed; reserve a slot in the future."
        )
    reservation.status = ReservationStatus.CONVERTED
    reservation.converted_at = clock.now()
    reservation.holds.clear()
    try:
        post = posts.add_post(
            scope, content=content, platforms=list(reservation.platforms), scheduled_at=reservation.starts_at,
        )
        if first_comment is not None:
            attach_first_comment(scope, post, first_comment, field="first_comment")
    except ApiError:
        # Refused under the rules of POST /posts or of the first comment: nothing was
        # done, and the reservation stays held.
        session.rollback()
        raise
    reservation.post = post
    record_activity(
        session, workspace_id=scope.workspace_id, livemode=scope.livemode, type="reservation.converted",
        subject_type="reservation", subject_id=reservation.id, summary=reservation.title, actor=scope.actor.name,
        post_id=post.id, scheduled_at=reservation.starts_at,
    )
    session.commit()
    shown = posts.get_post(session=session, principal=principal, post_id=post.id)
    return Conversion(reservation=reservation, post=shown)
