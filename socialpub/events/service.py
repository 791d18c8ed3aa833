"""The outbox: an event row written in the same transaction as the change it reports."""
from __future__ import annotations

import functools

from persistence.events import Event
from socialpub.posts.schemas import PostSchema

EVENT_TYPES = (
    "post.scheduled",
    "post.published",
    "post.failed",
    "bulk.completed",
    "rss.item.created",
    "incident.opened",
    "incident.resolved",
)


def record(session, *, workspace_id, livemode: bool, type: str, data: dict) -> Event:
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {type!r}")
    event = Event(workspace_id=workspace_id, livemode=livemode, type=type, data=data)
    session.add(event)
    return event


def record_post_event(session, post, type: str) -> Event:
    return record(
        session, workspace_id=post.workspace_id, livemode=post.livemode, type=type, data={"post": _post_schema().dump(post)}
    )


def warm_up() -> None:
    _post_schema()


@functools.cache
def _post_schema():
    # Built once: a schema instance is reusable, and building one (with its nested
    # schemas) costs more than a dump.
    return PostSchema()
