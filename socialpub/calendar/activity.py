"""The calendar's activity feed: an entry written by the service that makes a change,
in that change's transaction, so the feed never shows what did not happen nor misses
what did.

Posts and publishing record here as well as the calendar itself, so this module
imports only records: the services that call it may be imported by the calendar."""
from __future__ import annotations

from persistence.calendar import CalendarActivity

ACTIVITY_TYPES = (
    "post.created",
    "post.scheduled",
    "post.rescheduled",
    "post.published",
    "post.failed",
    "post.deleted",
    "reservation.made",
    "reservation.converted",
    "comment.added",
)

SUMMARY_LENGTH = 200


def record_activity(
    session, *, workspace_id, livemode: bool, type: str, subject_type: str, subject_id, summary: str,
    actor: str | None = None, post_id=None, scheduled_at=None, previous_scheduled_at=None,
) -> CalendarActivity:
    if type not in ACTIVITY_TYPES:
        raise ValueError(f"unknown activity type {type!r}")
    entry = CalendarActivity(
        workspace_id=workspace_id, livemode=livemode, type=type, subject_type=subject_type, subject_id=subject_id,
        summary=_shortened(summary), actor=actor, post_id=post_id, scheduled_at=scheduled_at,
        previous_scheduled_at=previous_scheduled_at,
    )
    session.add(entry)
    return entry


def record_post_activity(session, post, type: str, *, actor: str | None = None, scheduled_at=None) -> CalendarActivity:
    """A change of a post. For `post.scheduled`, call it before the post takes its new
    `scheduled_at` (given here): a post that already had a time is rescheduled, from
    that time."""
    previous = None
    if type == "post.scheduled":
        previous = post.scheduled_at
        type = "post.rescheduled" if previous is not None else type
    else:
        scheduled_at = post.scheduled_at
    if post.id is None:
        # A new post gets its id at flush; the entry names it.
        session.flush([post])
    return record_activity(
        session, workspace_id=post.workspace_id, livemode=post.livemode, type=type, subject_type="post",
        subject_id=post.id, post_id=post.id, summary=post.content, actor=actor, scheduled_at=scheduled_at,
        previous_scheduled_at=previous,
    )


def _shortened(text: str) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"
