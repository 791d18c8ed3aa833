"""The contract's shapes of the calendar: preferences, reservations, the view of a
range, comments and activity, and what requests send."""
from __future__ import annotations

from marshmallow import RAISE, Schema, fields

from socialpub.posts.schemas import PostSchema
from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class _Request(Schema):
    class Meta:
        unknown = RAISE
        ordered = True


class SlotInputSchema(_Request):
    weekday = fields.String(required=True)
    time = fields.String(required=True)
    platforms = fields.List(fields.String(), required=True)


class WorkingHoursInputSchema(_Request):
    start = fields.String(required=True)
    end = fields.String(required=True)


class PreferencesInputSchema(_Request):
    timezone = fields.String(required=True)
    week_start = fields.String(data_key="weekStart", required=True)
    default_view = fields.String(data_key="defaultView", required=True)
    slots = fields.List(fields.Nested(SlotInputSchema), required=True)
    working_hours = fields.Nested(WorkingHoursInputSchema, data_key="workingHours", allow_none=True)


class SlotSchema(CompiledSchema):
    class Meta:
        ordered = True

    weekday = fields.String()
    time = fields.String()
    platforms = fields.List(fields.String())


class PreferencesSchema(CompiledSchema):
    """The document; `updatedAt` is null while the workspace has the defaults."""

    class Meta:
        ordered = True

    timezone = fields.String()
    week_start = fields.String(data_key="weekStart")
    default_view = fields.String(data_key="defaultView")
    slots = fields.Method("dump_slots")
    working_hours = fields.Method("dump_working_hours", data_key="workingHours")
    livemode = fields.Boolean()
    updated_at = UtcTimestamp(data_key="updatedAt", allow_none=True)

    def dump_slots(self, preferences):
        return [
            {"weekday": s["weekday"], "time": s["time"], "platforms": list(s["platforms"])} for s in preferences.slots
        ]

    def dump_working_hours(self, preferences):
        if preferences.working_hours_start is None:
            return None
        return {"start": preferences.working_hours_start, "end": preferences.working_hours_end}


class ReservationInputSchema(_Request):
    starts_at = UtcTimestamp(data_key="startsAt", required=True)
    platforms = fields.List(fields.String(), required=True)
    title = fields.String(required=True)
    note = fields.String(allow_none=True)


class ConvertInputSchema(_Request):
    content = fields.String(required=True)
    first_comment = fields.String(data_key="firstComment")


class ReservationSchema(RecordSchema):
    starts_at = UtcTimestamp(data_key="startsAt")
    platforms = fields.List(fields.String())
    title = fields.String()
    note = fields.String(allow_none=True)
    status = fields.String()
    created_by = fields.String(data_key="createdBy")
    post_id = fields.UUID(data_key="postId", allow_none=True)
    converted_at = UtcTimestamp(data_key="convertedAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "starts_at", "platforms", "title", "note", "status", "created_by", "post_id", "converted_at",
                  "livemode", "created_at", "updated_at")


class CalendarPostSchema(CompiledSchema):
    """A scheduled post as the calendar draws it; the post itself is at /posts/{postId}."""

    class Meta:
        ordered = True

    id = fields.UUID()
    content = fields.String()
    platforms = fields.List(fields.String())
    status = fields.String()
    scheduled_at = UtcTimestamp(data_key="scheduledAt")


class OpenSlotSchema(CompiledSchema):
    class Meta:
        ordered = True

    starts_at = UtcTimestamp(data_key="startsAt")
    local_date = fields.Date(data_key="localDate")
    local_time = fields.String(data_key="localTime")
    weekday = fields.String()
    platforms = fields.List(fields.String())


class CalendarRangeSchema(CompiledSchema):
    class Meta:
        ordered = True

    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    timezone = fields.String()
    reservations = fields.List(fields.Nested(ReservationSchema))
    scheduled_posts = fields.List(fields.Nested(CalendarPostSchema), data_key="scheduledPosts")
    open_slots = fields.List(fields.Nested(OpenSlotSchema), data_key="openSlots")


class CommentInputSchema(_Request):
    post_id = fields.String(data_key="postId")
    date = fields.Date()
    body = fields.String(required=True)


class CommentSchema(RecordSchema):
    post_id = fields.UUID(data_key="postId", allow_none=True)
    date = fields.Date(allow_none=True)
    body = fields.String()
    author = fields.String()
    mentions = fields.List(fields.String())
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "post_id", "date", "body", "author", "mentions", "livemode", "created_at", "updated_at")


class ActivitySchema(RecordSchema):
    type = fields.String()
    subject = fields.Method("dump_subject")
    post_id = fields.UUID(data_key="postId", allow_none=True)
    actor = fields.String(allow_none=True)
    summary = fields.String()
    scheduled_at = UtcTimestamp(data_key="scheduledAt", allow_none=True)
    previous_scheduled_at = UtcTimestamp(data_key="previousScheduledAt", allow_none=True)
    livemode = fields.Boolean()

    def dump_subject(self, entry):
        return {"type": entry.subject_type, "id": str(entry.subject_id)}

    class Meta(RecordSchema.Meta):
        fields = ("id", "type", "subject", "post_id", "actor", "summary", "scheduled_at", "previous_scheduled_at",
                  "livemode", "created_at", "updated_at")


class ConversionSchema(CompiledSchema):
    class Meta:
        ordered = True

    reservation = fields.Nested(ReservationSchema)
    post = fields.Nested(PostSchema)
