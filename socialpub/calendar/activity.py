"""The calendar's activity feed: an entry written by the service that makes a change,
in that change's transaction, so the feed never shows what did not happen nor misses
what did.

The calendar records its own changes here (reservations, comments) and, subscribed
to the posts' announcements (socialpub.calendar.subscribers), every change of a post;
posts and publishing never import the calendar."""
from __future__ import annotations

from persistence.calendar import CalendarActivity
from persistence.types import utcnow

ACTIVITY_TYPES = (
    "post.created",
    "post.scheduled",
    "post.rescheduled",
    "post.published",
    "post.failed",
    "post.deleted",
    "post.archived",
    "reservation.made",
    "reservation.updated",
    "reservation.released",
    "reservation.converted",
    "comment.added",
)

SUMMARY_LENGTH = 200


def record_activity(
    session, *, workspace_id, livemode: bool, type: str, subject_type: str, subject_id, summary: str,
    actor: str, post_id=None, scheduled_at=None, previous_scheduled_at=None,
) -> CalendarActivity:
    if type not in ACTIVITY_TYPES:
        raise ValueError(f"unknown activity type {type!r}")
    now = utcnow()
    entry = CalendarActivity(
        # An entry never changes: it was last updated when it was created.
        created_at=now, updated_at=now,
        workspace_id=workspace_id, livemode=livemode, type=type, subject_type=subject_type, subject_id=subject_id,
        summary=_shortened(summary), actor=actor, post_id=post_id, scheduled_at=scheduled_at,
        previous_scheduled_at=previous_scheduled_at,
    )
    session.add(entry)
    return entry


def record_post_activity(
    session, post, type: str, *, actor: str, previous_scheduled_at=None
) -> CalendarActivity:
    """A change of a post, as the post is after it: `post.rescheduled` names the time
    it had before (`previous_scheduled_at`)."""
    return record_activity(
        session, workspace_id=post.workspace_id, livemode=post.livemode, type=type, subject_type="post",
        subject_id=post.id, post_id=post.id, summary=post.content, actor=actor, scheduled_at=post.scheduled_at,
        previous_scheduled_at=previous_scheduled_at if type == "post.rescheduled" else None,
    )


def _shortened(text: str) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"
