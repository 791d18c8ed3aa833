"""Each action on a mix of posts it fits, posts it does not fit (conflict), another
workspace's or mode's posts and ids that name nothing (resource_not_found): counts,
errors, effects, and a bulk.completed event once finished."""
import datetime as dt
import uuid
from itertools import zip_longest

import pytest
from sqlalchemy import func, select, update

from persistence.accounts import ConnectedAccount
from persistence.events import Event
from persistence.posts import Post, PostTarget
from persistence.types import utcnow
from socialpub.bulk.service import TIMED_ACTIONS as TIMED
from tests.support.bulk import later, new_post, operation, post_of, started
from tests.support.factories import make_key, make_post, make_workspace
from tests.support.publishing import deliveries


def errors_by_post(data) -> dict:
    return {error["postId"]: error["code"] for error in data["errors"]}


def finished(client, key, jobs, **body) -> dict:
    data = started(client, key, **body)
    jobs.run()
    done = operation(client, key, data["id"])
    assert done["status"] == "completed", done
    assert done["processed"] == done["total"] == done["succeeded"] + done["failed"]
    assert done["startedAt"] and done["completedAt"]
    return done


# Per action: the states it acts on and the states it refuses (409 `conflict` as the
# single-post operation would answer). Delete removes a post in any state, as DELETE
# /posts/{postId} does, so it has no state to refuse.
MIX = {
    "schedule": (["draft", "draft"], ["scheduled", "published"]),
    "reschedule": (["scheduled", "failed"], ["draft", "published"]),
    "publish": (["draft", "scheduled"], ["published"]),
    "delete": (["draft", "scheduled", "published", "failed"], []),
    "archive": (["draft", "published", "failed"], ["scheduled", "archived"]),
}


def post_in(session, workspace, state: str, *, livemode: bool = False) -> str:
    fields = {"status": state}
    if state == "archived":
        fields = {"status": "draft", "archived_at": utcnow()}
    elif state in ("published", "failed"):
        fields["scheduled_at"] = utcnow() - dt.timedelta(hours=1)
    return str(make_post(session, workspace, livemode=livemode, **fields).id)


def snapshot(session, post_id: str):
    """Everything an action could change about a post, or None once it is gone."""
    session.expire_all()
    post = session.get(Post, uuid.UUID(post_id))
    if post is None:
        return None
    targets = session.execute(select(func.count()).select_from(PostTarget).where(PostTarget.post_id == post.id)).scalar_one()
    events = [e.type for e in session.execute(select(Event).order_by(Event.created_at)).scalars()
              if (e.data.get("post") or {}).get("id") == post_id]
    return (post.status, post.scheduled_at, post.archived_at, post.updated_at, post.content, targets, events)


def events_of(session, type_: str) -> list[Event]:
    session.expire_all()
    return list(session.execute(select(Event).where(Event.type == type_).order_by(Event.created_at)).scalars())


@pytest.mark.parametrize("action", list(MIX))
def test_each_action_on_a_mix_of_fitting_refused_foreign_and_unknown_posts(client, session, workspace, key, jobs, action):
    fits, refused = MIX[action]
    other_workspace = make_workspace(session, name="Other Co")
    fitting = [post_in(session, workspace, state) for state in fits]
    conflicts = [post_in(session, workspace, state) for state in refused]
    # Posts the action would fit, were they the key's: another workspace's (same
    # mode) and this workspace's in the other mode.
    foreign = post_in(session, other_workspace, fits[0])
    other_mode = post_in(session, workspace, fits[0], livemode=True)
    unknown, malformed = str(uuid.uuid4()), "not-a-post"
    not_found = [foreign, unknown, other_mode, malformed]
    # Interleaved, so that refused items sit between applied ones.
    requested = [item for group in zip_longest(fitting, conflicts, not_found) for item in group if item]
    untouched = {post_id: snapshot(session, post_id) for post_id in [*conflicts, foreign, other_mode]}
    timed = {"scheduledAt": later(days=4)} if action in TIMED else {}

    done = finished(client, key, jobs, action=action, postIds=requested, **timed)

    assert (done["total"], done["succeeded"], done["failed"]) == (len(requested), len(fitting), len(requested) - len(fitting))
    expected = {**{p: "conflict" for p in conflicts}, **{p: "resource_not_found" for p in not_found}}
    assert [(e["postId"], e["code"]) for e in done["errors"]] == [(p, expected[p]) for p in requested if p in expected]
    for error in done["errors"]:
        assert error["message"], error
    for post_id, before in untouched.items():
        assert snapshot(session, post_id) == before, f"{post_id} changed"
    for post_id in fitting:
        after = snapshot(session, post_id)
        if action == "delete":
            assert after is None
            continue
        status, scheduled_at, archived_at = after[:3]
        if action in TIMED:
            assert status == "scheduled" and scheduled_at.isoformat()[:16] == timed["scheduledAt"][:16]
            assert after[6][-1] == "post.scheduled"
        elif action == "publish":
            assert status == "scheduled" and scheduled_at <= utcnow() and after[5] == 1
            assert after[6][-1] == "post.scheduled"
        else:
            assert archived_at is not None and status == fits[fitting.index(post_id)]


class TestSchedule:
    def test_schedules_drafts_and_reports_the_rest(self, client, session, key, jobs):
        drafts = [new_post(client, key) for _ in range(2)]
        already = new_post(client, key, scheduled_in_days=3)
        other_key = make_key(session, make_workspace(session, name="Other Co"))
        foreign = new_post(client, other_key)
        unknown, malformed = str(uuid.uuid4()), "not-a-post"
        when = later(days=2)
        done = finished(client, key, jobs, action="schedule", postIds=[*drafts, already, foreign, unknown, malformed],
                        scheduledAt=when)
        assert (done["total"], done["succeeded"], done["failed"]) == (6, 2, 4)
        assert errors_by_post(done) == {
            already: "conflict", foreign: "resource_not_found", unknown: "resource_not_found", malformed: "resource_not_found",
        }
        assert [e["postId"] for e in done["errors"]] == [already, foreign, unknown, malformed], "in request order"
        for post_id in drafts:
            post = post_of(client, key, post_id).json()["data"]
            assert post["status"] == "scheduled" and post["scheduledAt"][:16] == when[:16]
            assert [t["status"] for t in post["targets"]] == ["pending"]
        assert post_of(client, other_key, foreign).json()["data"]["status"] == "draft", "another workspace's post untouched"

    def test_items_give_each_post_its_time(self, client, key, jobs):
        first, second = new_post(client, key), new_post(client, key)
        done = finished(client, key, jobs, action="schedule", items=[
            {"postId": first, "scheduledAt": later(days=1)}, {"postId": second, "scheduledAt": later(days=5)},
        ])
        assert done["succeeded"] == 2
        times = [post_of(client, key, p).json()["data"]["scheduledAt"] for p in (first, second)]
        assert times[0] < times[1]

    def test_a_post_that_cannot_be_scheduled_is_an_item_error(self, client, session, workspace, key, jobs):
        unreachable = new_post(client, key, platforms=("pinterest",))
        fine = new_post(client, key)
        # Scheduling needs an active account on every platform of the post.
        session.execute(
            update(ConnectedAccount)
            .where(ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.platform == "pinterest")
            .values(status="disabled")
        )
        session.commit()
        done = finished(client, key, jobs, action="schedule", postIds=[unreachable, fine], scheduledAt=later(days=1))
        assert errors_by_post(done) == {unreachable: "validation_error"}
        assert "pinterest" in done["errors"][0]["message"]
        assert post_of(client, key, unreachable).json()["data"]["status"] == "draft", "a refused item changes nothing"
        assert post_of(client, key, fine).json()["data"]["status"] == "scheduled"


class TestFarFuture:
    def test_schedules_and_reschedules_to_the_last_day_of_year_9999(self, client, key, jobs):
        draft, scheduled = new_post(client, key), new_post(client, key, scheduled_in_days=1)
        done = finished(client, key, jobs, action="schedule", postIds=[draft], scheduledAt="9999-12-31T00:00:00Z")
        assert done["succeeded"] == 1
        done = finished(client, key, jobs, action="reschedule", items=[
            {"postId": scheduled, "scheduledAt": "9999-12-31T23:59:59+14:00"},
        ])
        assert done["succeeded"] == 1
        assert post_of(client, key, draft).json()["data"]["scheduledAt"] == "9999-12-31T00:00:00.000Z"
        assert post_of(client, key, scheduled).json()["data"]["scheduledAt"] == "9999-12-31T09:59:59.000Z"


class TestReschedule:
    def test_moves_scheduled_posts_and_refuses_drafts(self, client, key, jobs):
        scheduled = new_post(client, key, scheduled_in_days=1)
        draft = new_post(client, key)
        when = later(days=9)
        done = finished(client, key, jobs, action="reschedule", postIds=[scheduled, draft], scheduledAt=when)
        assert errors_by_post(done) == {draft: "conflict"}
        assert post_of(client, key, scheduled).json()["data"]["scheduledAt"][:16] == when[:16]
        assert post_of(client, key, draft).json()["data"]["status"] == "draft"


class TestPublish:
    def test_hands_posts_to_the_pipeline(self, client, session, key, jobs, pipeline):
        drafts = [new_post(client, key) for _ in range(3)]
        done = finished(client, key, jobs, action="publish", postIds=[*drafts, str(uuid.uuid4())])
        assert (done["succeeded"], done["failed"]) == (3, 1)
        pipeline.run()
        for post_id in drafts:
            assert post_of(client, key, post_id).json()["data"]["status"] == "published"
        assert deliveries(session) == 3

    def test_a_published_post_is_a_conflict_and_is_not_sent_again(self, client, session, key, jobs, pipeline):
        post_id = new_post(client, key)
        finished(client, key, jobs, action="publish", postIds=[post_id])
        pipeline.run()
        again = finished(client, key, jobs, action="publish", postIds=[post_id])
        assert errors_by_post(again) == {post_id: "conflict"}
        pipeline.run()
        assert deliveries(session) == 1


class TestDelete:
    def test_deletes_its_posts_and_no_one_elses(self, client, session, key, jobs):
        mine = [new_post(client, key), new_post(client, key, scheduled_in_days=1)]
        other_key = make_key(session, make_workspace(session, name="Other Co"))
        foreign = new_post(client, other_key)
        done = finished(client, key, jobs, action="delete", postIds=[*mine, foreign])
        assert errors_by_post(done) == {foreign: "resource_not_found"}
        for post_id in mine:
            assert post_of(client, key, post_id).status_code == 404
        assert post_of(client, other_key, foreign).status_code == 200

    def test_a_post_of_the_other_mode_is_not_found(self, client, session, key, live_key, jobs):
        test_post = new_post(client, key)
        done = finished(client, live_key, jobs, action="delete", postIds=[test_post])
        assert errors_by_post(done) == {test_post: "resource_not_found"}
        assert post_of(client, key, test_post).status_code == 200


class TestArchive:
    def test_archives_and_lists_hide_them(self, client, key, jobs):
        draft = new_post(client, key)
        scheduled = new_post(client, key, scheduled_in_days=1)
        done = finished(client, key, jobs, action="archive", postIds=[draft, scheduled])
        assert errors_by_post(done) == {scheduled: "conflict"}
        assert post_of(client, key, draft).json()["data"]["archivedAt"] is not None
        listed = [p["id"] for p in client.get("/api/v1/posts", headers=key.headers).json()["data"]]
        assert draft not in listed and scheduled in listed
        archived = client.get("/api/v1/posts?includeArchived=true", headers=key.headers).json()["data"]
        assert draft in [p["id"] for p in archived]
        again = finished(client, key, jobs, action="archive", postIds=[draft])
        assert errors_by_post(again) == {draft: "conflict"}


class TestCompletedEvent:
    def test_a_finished_operation_writes_one_bulk_completed_event(self, client, session, key, jobs):
        post_id = new_post(client, key)
        done = finished(client, key, jobs, action="archive", postIds=[post_id, str(uuid.uuid4())])
        jobs.run()  # nothing left: a second look at a finished operation writes nothing
        events = events_of(session, "bulk.completed")
        assert len(events) == 1
        reported = events[0].data["bulkOperation"]
        assert reported["id"] == done["id"] and reported["status"] == "completed"
        assert (reported["succeeded"], reported["failed"]) == (1, 1)
        assert events[0].livemode is False

    def test_schedule_writes_one_post_scheduled_event_per_post(self, client, session, key, jobs):
        drafts = [new_post(client, key) for _ in range(3)]
        before = len(events_of(session, "post.scheduled"))
        finished(client, key, jobs, action="schedule", postIds=drafts, scheduledAt=later(days=1))
        assert len(events_of(session, "post.scheduled")) - before == 3
        session.expire_all()
        assert session.execute(select(func.count()).select_from(Post).where(Post.status == "scheduled")).scalar_one() == 3
