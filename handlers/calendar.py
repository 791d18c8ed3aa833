"""Handlers of the `calendar` tag."""
import datetime as dt

from socialpub import envelope
from socialpub.calendar import comments as comment_service
from socialpub.calendar import reservations as reservation_service
from socialpub.calendar import service as calendar_service
from socialpub.calendar.schemas import (
    ActivitySchema,
    CalendarRangeSchema,
    CommentInputSchema,
    CommentSchema,
    ConversionSchema,
    ConvertInputSchema,
    PreferencesInputSchema,
    PreferencesSchema,
    ReservationInputSchema,
    ReservationSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_session, load

preferences_schema = PreferencesSchema()
preferences_input_schema = PreferencesInputSchema()
range_schema = CalendarRangeSchema()
reservation_schema = ReservationSchema()
reservation_input_schema = ReservationInputSchema()
conversion_schema = ConversionSchema()
convert_input_schema = ConvertInputSchema()
comment_schema = CommentSchema()
comment_input_schema = CommentInputSchema()
activity_schema = ActivitySchema()


def get_calendar_preferences():
    preferences = calendar_service.get_preferences(session=current_session(), principal=current_principal())
    return envelope.ok(preferences_schema.dump(preferences))


def replace_calendar_preferences(body):
    fields = load(preferences_input_schema, body)
    preferences = calendar_service.replace_preferences(
        session=current_session(), principal=current_principal(), **fields
    )
    return envelope.ok(preferences_schema.dump(preferences))


def list_reservations(from_=None, to=None, next_free=None):
    view = reservation_service.calendar_range(
        session=current_session(), principal=current_principal(), since=from_, until=to, next_free=next_free
    )
    return envelope.ok(range_schema.dump(view))


def create_reservation(body):
    fields = load(reservation_input_schema, body)
    reservation = reservation_service.create_reservation(
        session=current_session(), principal=current_principal(), **fields
    )
    shown = reservation_schema.dump(reservation)
    # No page of its own: the calendar's view of its minute shows it.
    until = (reservation.starts_at + dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    since = reservation.starts_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return envelope.created(shown, location=f"{API_PREFIX}/calendar/reservations?from={since}&to={until}")


def get_reservation(reservation_id):
    reservation = reservation_service.get_reservation(
        session=current_session(), principal=current_principal(), reservation_id=reservation_id
    )
    return envelope.ok(reservation_schema.dump(reservation))


def update_reservation(reservation_id, body):
    fields = load(reservation_input_schema, body, partial=True)
    reservation = reservation_service.update_reservation(
        session=current_session(), principal=current_principal(), reservation_id=reservation_id, **fields
    )
    return envelope.ok(reservation_schema.dump(reservation))


def delete_reservation(reservation_id):
    released_id = reservation_service.release_reservation(
        session=current_session(), principal=current_principal(), reservation_id=reservation_id
    )
    return envelope.deleted(released_id)


def convert_reservation(reservation_id, body):
    fields = load(convert_input_schema, body)
    conversion = reservation_service.convert_reservation(
        session=current_session(), principal=current_principal(), reservation_id=reservation_id, **fields
    )
    return envelope.created(conversion_schema.dump(conversion), location=f"{API_PREFIX}/posts/{conversion.post.id}")


def list_calendar_comments(post_id=None, from_=None, to=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = comment_service.list_comments(
        session=current_session(), principal=current_principal(), post_id=post_id, since=from_, until=to,
        limit=limit, offset=offset,
    )
    return envelope.page(result, lambda comments: comment_schema.dump(comments, many=True))


def create_calendar_comment(body):
    fields = load(comment_input_schema, body)
    comment = comment_service.create_comment(session=current_session(), principal=current_principal(), **fields)
    shown = comment_schema.dump(comment)
    # No page of its own: the list of its post's (or date's) comments shows it.
    query = f"postId={comment.post_id}" if comment.post_id else f"from={comment.date}&to={comment.date}"
    return envelope.created(shown, location=f"{API_PREFIX}/calendar/comments?{query}")


def list_calendar_activity(type_=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = calendar_service.list_activity(
        session=current_session(), principal=current_principal(), type=type_, limit=limit, offset=offset
    )
    return envelope.page(result, lambda entries: activity_schema.dump(entries, many=True))
