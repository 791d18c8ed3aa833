"""Every path that changes a post announces the change once, in its own transaction:
each produces its webhook event (where one is defined) and its calendar activity
entry, naming who acted, in the one commit that makes the change."""
from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field

import pytest
from sqlalchemy import event, select

from persistence.accounts import ConnectedAccount
from persistence.calendar import CalendarActivity
from persistence.events import Event
from socialpub import announcements, clock
from socialpub.posts.changes import POSTS
from tests.rss.helpers import follow, items, rss_feed
from tests.support.feed_server import FeedServer

NOW = dt.datetime(2027, 3, 1, 9, 0, tzinfo=dt.timezone.utc)
LATER = NOW + dt.timedelta(days=1)
LATER_STILL = NOW + dt.timedelta(days=2)
_WRITE = re.compile(r'^\s*(INSERT INTO|UPDATE|DELETE FROM)\s+"?(\w+)', re.I)


def iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Commits:
    """The tables each committed unit of work wrote: the suite's sessions join one
    outer transaction, so a commit is the release of a session's outermost savepoint
    (a rolled-back one is forgotten). Savepoints opened while another is open count as
    nested in it: the measured change runs with no other session in a transaction."""

    def __init__(self):
        self.units: list[list[str]] = []
        self._open: list[list[str]] = []

    def savepoint(self, *_):
        self._open.append([])

    def release(self, *_):
        done = self._open.pop()
        if self._open:
            self._open[-1].extend(done)
        else:
            self.units.append(done)

    def rollback(self, *_):
        self._open.pop()

    def statement(self, _conn, _cursor, statement, *_):
        match = _WRITE.match(statement)
        if match and self._open:
            self._open[-1].append(match.group(2).lower())

    def since(self, mark: int) -> list[list[str]]:
        return self.units[mark:]


@pytest.fixture
def commits(db):
    recorder = Commits()
    connection = db.sessionmaker.kw["bind"]
    hooks = [("savepoint", recorder.savepoint), ("release_savepoint", recorder.release),
             ("rollback_savepoint", recorder.rollback), ("before_cursor_execute", recorder.statement)]
    for name, hook in hooks:
        event.listen(connection, name, hook)
    yield recorder
    for name, hook in hooks:
        event.remove(connection, name, hook)


@dataclass
class Ctx:
    client: object
    key: object
    session: object
    jobs: object
    pipeline: object
    feeds: FeedServer | None = None
    notes: dict = field(default_factory=dict)

    def call(self, method: str, path: str, body=None):
        extra = {} if body is None else {"json": body}
        response = getattr(self.client, method)("/api/v1" + path, headers=self.key.headers, **extra)
        assert response.status_code < 300, response.text
        return response.json()["data"] if response.content else None

    def post(self, *, scheduled: bool = False, platforms=("twitter",), content="A post") -> str:
        body = {"content": content, "platforms": list(platforms)}
        if scheduled:
            body["scheduledAt"] = iso(LATER)
        return self.call("post", "/posts", body)["id"]

    def bulk(self, action: str, post_id: str, **extra) -> str:
        operation = self.call("post", "/bulk", {"action": action, "postIds": [post_id], **extra})
        self.jobs.run()
        self.notes["actor"] = f"bulk {operation['id']}"
        return post_id


# -- the paths -----------------------------------------------------------------------
# Each prepares what it needs (outside the measured window), then returns the change
# to measure as a callable that answers the post's id.

def api_create_draft(ctx):
    return lambda: ctx.post()


def api_create_scheduled(ctx):
    return lambda: ctx.post(scheduled=True)


def api_update_schedules(ctx):
    post_id = ctx.post()
    return lambda: ctx.call("patch", f"/posts/{post_id}", {"scheduledAt": iso(LATER)})["id"]


def api_update_reschedules(ctx):
    post_id = ctx.post(scheduled=True)
    return lambda: ctx.call("patch", f"/posts/{post_id}", {"scheduledAt": iso(LATER_STILL)})["id"]


def api_delete(ctx):
    post_id = ctx.post()
    return lambda: ctx.call("delete", f"/posts/{post_id}")["id"]


def api_publish(ctx):
    post_id = ctx.post()
    return lambda: ctx.call("post", f"/posts/{post_id}/publish")["id"]


def bulk_schedule(ctx):
    post_id = ctx.post()
    return lambda: ctx.bulk("schedule", post_id, scheduledAt=iso(LATER))


def bulk_reschedule(ctx):
    post_id = ctx.post(scheduled=True)
    return lambda: ctx.bulk("reschedule", post_id, scheduledAt=iso(LATER_STILL))


def bulk_publish(ctx):
    post_id = ctx.post(scheduled=True)
    return lambda: ctx.bulk("publish", post_id)


def bulk_delete(ctx):
    post_id = ctx.post()
    return lambda: ctx.bulk("delete", post_id)


def bulk_archive(ctx):
    post_id = ctx.post()
    return lambda: ctx.bulk("archive", post_id)


def publishing_published(ctx):
    post_id = ctx.post(scheduled=True)

    def run():
        ctx.pipeline.run(at=LATER + dt.timedelta(seconds=1))
        return post_id

    return run


def publishing_failed(ctx):
    account = ctx.session.execute(select(ConnectedAccount).where(
        ConnectedAccount.platform == "linkedin", ConnectedAccount.livemode.is_(False)
    )).scalar_one()
    account.options = {"failPermanent": True}
    ctx.session.commit()
    post_id = ctx.post(scheduled=True, platforms=("linkedin",))

    def run():
        ctx.pipeline.run(at=LATER + dt.timedelta(seconds=1))
        return post_id

    return run


def _feed_item(ctx, **fields) -> tuple[str, str]:
    ctx.feeds.serve("/blog.xml", rss_feed(1))
    feed = follow(ctx.client, ctx.key, ctx.feeds.url("/blog.xml"), **fields)
    ctx.call("post", f"/rss/feeds/{feed['id']}/fetch")
    ctx.jobs.run()
    return feed["id"], items(ctx.client, ctx.key, feed["id"])[0]["id"]


def rss_publish(mode: str):
    def prepare(ctx):
        feed_id, item_id = _feed_item(ctx)
        body = {"mode": mode, **({"scheduledAt": iso(LATER)} if mode == "schedule" else {})}
        return lambda: ctx.call("post", f"/rss/feeds/{feed_id}/items/{item_id}/publish", body)["postId"]

    prepare.__name__ = f"rss_publish_{mode}"
    return prepare


def rss_auto(ctx):
    ctx.feeds.serve("/auto.xml", rss_feed(1))
    feed = follow(ctx.client, ctx.key, ctx.feeds.url("/auto.xml"), mode="auto")
    ctx.call("post", f"/rss/feeds/{feed['id']}/fetch")
    ctx.jobs.run()  # the first fetch of an auto feed only takes note of what is there
    ctx.feeds.serve("/auto.xml", rss_feed(2))
    ctx.notes["actor"] = f"rss feed {feed['id']}"

    def run():
        ctx.call("post", f"/rss/feeds/{feed['id']}/fetch")
        ctx.jobs.run()
        published = [item for item in items(ctx.client, ctx.key, feed["id"]) if item["status"] == "published"]
        assert len(published) == 1, published
        return published[0]["postId"]

    return run


def template_use(ctx):
    template = ctx.call("post", "/templates", {"name": "Launch", "content": "Launching {{thing}}",
                                               "variables": [{"name": "thing", "required": True}]})
    return lambda: ctx.call("post", f"/templates/{template['id']}/use", {
        "variables": {"thing": "spring"}, "createPost": {"platforms": ["twitter"], "scheduledAt": iso(LATER)},
    })["post"]["id"]


def calendar_convert(ctx):
    reservation = ctx.call("post", "/calendar/reservations", {
        "startsAt": iso(LATER), "platforms": ["twitter"], "title": "Launch",
    })
    return lambda: ctx.call("post", f"/calendar/reservations/{reservation['id']}/convert", {
        "content": "Launch day", "firstComment": "More soon",
    })["post"]["id"]


KEY = "test key"
PATHS = [
    # (path, activity entries, events, actor: None means the key)
    (api_create_draft, ["post.created"], [], KEY),
    (api_create_scheduled, ["post.created"], ["post.scheduled"], KEY),
    (api_update_schedules, ["post.scheduled"], ["post.scheduled"], KEY),
    (api_update_reschedules, ["post.rescheduled"], ["post.scheduled"], KEY),
    (api_delete, ["post.deleted"], [], KEY),
    (api_publish, ["post.scheduled"], ["post.scheduled"], KEY),
    (bulk_schedule, ["post.scheduled"], ["post.scheduled"], "bulk"),
    (bulk_reschedule, ["post.rescheduled"], ["post.scheduled"], "bulk"),
    (bulk_publish, ["post.rescheduled"], ["post.scheduled"], "bulk"),
    (bulk_delete, ["post.deleted"], [], "bulk"),
    (bulk_archive, ["post.archived"], [], "bulk"),
    (publishing_published, ["post.published"], ["post.published"], "publishing"),
    (publishing_failed, ["post.failed"], ["post.failed"], "publishing"),
    (rss_publish("draft"), ["post.created"], [], KEY),
    (rss_publish("schedule"), ["post.created"], ["post.scheduled"], KEY),
    (rss_publish("now"), ["post.created"], ["post.scheduled"], KEY),
    (rss_auto, ["post.created"], ["post.scheduled"], "rss"),
    (template_use, ["post.created"], ["post.scheduled"], KEY),
    (calendar_convert, ["post.created"], ["post.scheduled"], KEY),
]


@pytest.fixture
def feeds(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with FeedServer() as server:
        yield server


@pytest.mark.parametrize(("path", "activity", "events", "actor"), PATHS, ids=[row[0].__name__ for row in PATHS])
def test_each_change_is_announced_once_in_its_commit(
    path, activity, events, actor, client, key, session, app, db, feeds, pipeline, commits,
):
    from tests.rss.conftest import Jobs

    with clock.installed(clock.FakeClock(NOW)):
        ctx = Ctx(client=client, key=key, session=session, jobs=Jobs(app.app.extensions["socialpub"]),
                  pipeline=pipeline, feeds=feeds)
        change = path(ctx)
        activity_before = {row.id for row in session.execute(select(CalendarActivity.id)).all()}
        events_before = {row.id for row in session.execute(select(Event.id)).all()}
        session.rollback()  # its savepoint ends here: the units measured below are the change's own
        mark = len(commits.units)
        post_id = change()
        session.expire_all()

    entries = [entry for entry in session.execute(
        select(CalendarActivity).where(CalendarActivity.post_id == uuid.UUID(post_id),
                                       CalendarActivity.type.like("post.%"))
        .order_by(CalendarActivity.created_at)
    ).scalars() if entry.id not in activity_before]
    assert [entry.type for entry in entries] == activity
    expected_actor = ctx.notes.get("actor", actor)
    assert {entry.actor for entry in entries} == {expected_actor}
    written = [row for row in session.execute(select(Event).order_by(Event.created_at)).scalars()
               if row.id not in events_before and (row.data.get("post") or {}).get("id") == post_id]
    assert [row.type for row in written] == events

    # The change, its activity entry and its event: one commit.
    units = [unit for unit in commits.since(mark) if "calendar_activity" in unit]
    assert len(units) == 1, units
    unit = units[0]
    assert {"posts", "post_targets"} & set(unit), unit
    if events:
        assert "events" in unit, unit


def test_a_subscriber_that_fails_aborts_the_change(client, key, session):
    def broken(_change):
        raise RuntimeError("a subscriber failed")

    with POSTS.subscribed(broken, "created"):
        response = client.post("/api/v1/posts", headers=key.headers, json={"content": "Lost", "platforms": ["twitter"]})
    assert response.status_code == 500 and response.json()["error"]["code"] == "internal_error"
    session.expire_all()
    assert session.execute(select(CalendarActivity)).first() is None
    assert client.get("/api/v1/posts", headers=key.headers).json()["pagination"]["totalItems"] == 0


def test_the_areas_subscribe_through_the_registry():
    names = {kind: [f"{receiver.__module__}.{receiver.__name__}" for receiver in POSTS.subscribers(kind)]
             for kind in POSTS.kinds}
    assert names["published"] == [
        "socialpub.events.subscribers.post_event", "socialpub.analytics.subscribers.enrol_published",
        "socialpub.calendar.subscribers.post_activity",
    ]
    assert names["deleted"] == [
        "socialpub.analytics.subscribers.forget_deleted", "socialpub.calendar.subscribers.post_activity",
        "socialpub.search.subscribers.drop_posts",
    ]
    assert names["edited"] == ["socialpub.search.subscribers.index_posts"]
    assert announcements.load_subscribers() is None  # once per process: a second call does nothing
