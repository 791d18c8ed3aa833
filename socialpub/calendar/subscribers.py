"""The calendar's reactions: an activity entry for every change of a post
(socialpub.posts.changes.POSTS), in the change's transaction, naming who acted."""
from __future__ import annotations

from socialpub.announcements import Change
from socialpub.calendar import activity
from socialpub.posts.changes import POSTS


@POSTS.subscribe("created", "scheduled", "rescheduled", "published", "failed", "deleted", "archived")
def post_activity(change: Change) -> None:
    for post in change.records:
        activity.record_post_activity(
            change.session, post, f"post.{change.kind}", actor=change.actor.name,
            previous_scheduled_at=change.details.get("previous_scheduled_at"),
        )
