"""The activity feed: written by the services that make each change, in its
transaction; newest first, filtered by type, per workspace and mode."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select

from persistence.calendar import CalendarActivity
from persistence.posts import Post, TargetStatus
from socialpub.publishing import service as publishing
from tests.calendar.conftest import NOW, iso

SOON = NOW + dt.timedelta(days=1)


def _feed(api, **params) -> list[dict]:
    response = api.get("/calendar/activity", **params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _types(api, **params) -> list[str]:
    return [entry["type"] for entry in _feed(api, **params)]


def test_a_post_created_scheduled_rescheduled_and_deleted(api, now):
    draft = api.post("/posts", {"content": "Our  autumn\ncollection", "platforms": ["twitter"]}).json()["data"]
    now.advance(1)
    api.patch(f"/posts/{draft['id']}", {"scheduledAt": iso(SOON)})
    now.advance(1)
    later = SOON + dt.timedelta(hours=3)
    api.patch(f"/posts/{draft['id']}", {"scheduledAt": iso(later)})
    now.advance(1)
    api.patch(f"/posts/{draft['id']}", {"content": "Edited, same time"})
    now.advance(1)
    assert api.delete(f"/posts/{draft['id']}").status_code == 200

    feed = _feed(api)
    assert [entry["type"] for entry in feed] == ["post.deleted", "post.rescheduled", "post.scheduled", "post.created"]
    deleted, rescheduled, scheduled, created = feed
    assert {entry["subject"]["id"] for entry in feed} == {draft["id"]}
    assert {entry["subject"]["type"] for entry in feed} == {"post"}
    assert created["actor"] == "test key" and created["summary"] == "Our autumn collection"
    assert created["scheduledAt"] is None
    assert (scheduled["scheduledAt"], scheduled["previousScheduledAt"]) == (iso(SOON), None)
    assert (rescheduled["scheduledAt"], rescheduled["previousScheduledAt"]) == (iso(later), iso(SOON))
    assert deleted["postId"] == draft["id"] and deleted["summary"] == "Edited, same time"


def test_a_post_created_with_a_time(api):
    post = api.post("/posts", {"content": "Queued", "platforms": ["twitter"], "scheduledAt": iso(SOON)}).json()["data"]
    (entry,) = _feed(api)
    assert (entry["type"], entry["postId"], entry["scheduledAt"]) == ("post.created", post["id"], iso(SOON))


def test_a_refused_change_records_nothing(api, session):
    api.post("/posts", {"content": "x" * 300, "platforms": ["twitter"]})
    api.post("/posts", {"content": "Past", "platforms": ["twitter"], "scheduledAt": iso(NOW - dt.timedelta(hours=1))})
    assert session.execute(select(func.count()).select_from(CalendarActivity)).scalar_one() == 0


def _settle(session, post_id: str, outcome: str) -> None:
    post = session.get(Post, uuid.UUID(post_id))
    for target in post.targets:
        target.status = outcome
        target.published_at = NOW if outcome == TargetStatus.PUBLISHED else None
    publishing.settle_posts(session, [post.id])
    session.commit()


def test_publishing_outcomes_are_recorded_where_the_post_is_settled(api, session):
    published = api.post("/posts", {"content": "Out", "platforms": ["twitter"], "scheduledAt": iso(SOON)}).json()["data"]
    failed = api.post("/posts", {"content": "Refused", "platforms": ["twitter"], "scheduledAt": iso(SOON)}).json()["data"]
    _settle(session, published["id"], TargetStatus.PUBLISHED)
    _settle(session, failed["id"], TargetStatus.FAILED)
    outcomes = {entry["postId"]: (entry["type"], entry["actor"]) for entry in _feed(api)
                if entry["type"] in ("post.published", "post.failed")}
    assert outcomes == {published["id"]: ("post.published", "publishing"), failed["id"]: ("post.failed", "publishing")}
    # Settling again changes nothing, so it records nothing.
    _settle(session, published["id"], TargetStatus.PUBLISHED)
    assert len(_feed(api, type="post.published")) == 1


def test_reservations_and_comments(api, now):
    reservation = api.post("/calendar/reservations", {"startsAt": iso(SOON), "platforms": ["twitter"],
                                                      "title": "Launch"}).json()["data"]
    now.advance(1)
    conversion = api.post(f"/calendar/reservations/{reservation['id']}/convert", {"content": "Go"}).json()["data"]
    now.advance(1)
    comment = api.post("/calendar/comments", {"postId": conversion["post"]["id"], "body": "Ship it @dana"}).json()["data"]

    by_type = {entry["type"]: entry for entry in _feed(api)}
    assert set(by_type) == {"reservation.made", "reservation.converted", "post.created", "comment.added"}
    made = by_type["reservation.made"]
    assert (made["subject"], made["actor"], made["summary"], made["scheduledAt"], made["postId"]) == (
        {"type": "reservation", "id": reservation["id"]}, "test key", "Launch", iso(SOON), None
    )
    converted = by_type["reservation.converted"]
    assert converted["subject"]["id"] == reservation["id"] and converted["postId"] == conversion["post"]["id"]
    added = by_type["comment.added"]
    assert added["subject"] == {"type": "comment", "id": comment["id"]}
    assert (added["postId"], added["summary"], added["actor"]) == (conversion["post"]["id"], "Ship it @dana", "test key")
    assert _types(api)[0] == "comment.added"


def test_the_feed_is_paged_and_filtered(api, now):
    for n in range(3):
        api.post("/calendar/comments", {"date": "2027-01-05", "body": f"Comment {n}"})
        now.advance(1)
    api.post("/posts", {"content": "A post", "platforms": ["twitter"]})
    response = api.get("/calendar/activity", type="comment.added", limit=2, offset=0)
    body = response.json()
    assert [entry["summary"] for entry in body["data"]] == ["Comment 2", "Comment 1"]
    assert body["pagination"]["totalItems"] == 3 and body["pagination"]["hasNextPage"] is True
    assert api.get("/calendar/activity", type="post.exploded").status_code == 422


def test_each_mode_sees_its_own_feed(api, client, live_key):
    api.post("/calendar/comments", {"date": "2027-01-05", "body": "Test mode"})
    live = client.get("/api/v1/calendar/activity", headers=live_key.headers).json()
    assert live["data"] == [] and live["pagination"]["totalItems"] == 0
