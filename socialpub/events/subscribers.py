"""The outbox's reactions: the webhook events of a post's changes, written in the
transaction of the change (socialpub.posts.changes.POSTS)."""
from __future__ import annotations

from persistence.posts import PostStatus
from socialpub.announcements import Change
from socialpub.events.service import record_post_event, warm_up
from socialpub.posts.changes import POSTS

# The event each announced change is, where one is defined.
_EVENT_OF = {
    "scheduled": "post.scheduled",
    "rescheduled": "post.scheduled",
    "published": "post.published",
    "failed": "post.failed",
}


# The post schema the events dump through is built once, as the outbox subscribes
# (at start-up: socialpub.announcements.load_subscribers), not in the first change.
warm_up()


@POSTS.subscribe("created", "scheduled", "rescheduled", "published", "failed")
def post_event(change: Change) -> None:
    for post in change.records:
        if change.kind == "created":
            # A new post is queued (post.scheduled) when it was created with a time, or
            # to be published now; a draft is no event.
            if post.status == PostStatus.SCHEDULED:
                record_post_event(change.session, post, "post.scheduled")
            continue
        record_post_event(change.session, post, _EVENT_OF[change.kind])
