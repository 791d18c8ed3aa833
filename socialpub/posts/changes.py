"""What the posts announce (socialpub.announcements): every change of a post's life,
once, by the service that makes it, in its transaction.

| kind | when | details |
|---|---|---|
| created | a post is saved (draft, scheduled, or due now) | |
| scheduled | a draft gets a time (or is published now) | |
| rescheduled | a post with a time gets another (or is published now) | previous_scheduled_at |
| published | every target of the post went out | |
| failed | a target failed for good and none is still going | |
| deleted | the post is removed (announced before it goes) | |
| archived | the post is archived (bulk archive) | |
| edited | its content or platforms change (an update, not a new time alone) | |

Subscribers read the post as it is after the change (`change.record`); the change's
scope names the workspace, mode and actor. A publishing job announces the posts of one
workspace mode it settled at once, `published` or `failed`, as one change whose record
is the list of them: `change.records` is a change's posts either way.
"""
from __future__ import annotations

from socialpub.announcements import Topic

POSTS = Topic(
    "post", kinds=("created", "scheduled", "rescheduled", "published", "failed", "deleted", "archived", "edited"),
)
