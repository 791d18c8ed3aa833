"""A post published through the pipeline is enrolled for metrics in the transaction
that settles it, and in the test mode's reports after the next claim pass, seconds
later, not after the sweep."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from persistence.analytics import TrackedPost
from socialpub import clock
from socialpub.analytics import jobs
from tests.analytics.conftest import NOW


def test_a_published_post_is_in_the_reports_seconds_later(client, key, session, pipeline):
    with clock.installed(clock.FakeClock(NOW)) as now:
        due = NOW + dt.timedelta(minutes=1)
        created = client.post("/api/v1/posts", headers=key.headers, json={
            "content": "Out now", "platforms": ["twitter", "mastodon"], "scheduledAt": due.isoformat(),
        })
        assert created.status_code == 201, created.text
        now.advance(61)
        pipeline.run()
        session.expire_all()
        tracked = session.execute(select(TrackedPost)).scalars().all()
        assert sorted(row.platform for row in tracked) == ["mastodon", "twitter"]
        assert all(row.next_due_at == due + dt.timedelta(seconds=1) and row.captured_at is None for row in tracked)

        now.advance(5)
        assert jobs.claim_due_metrics() >= 2
        pipeline.run_jobs()  # the collecting jobs the claim pass queued
        posts = client.get("/api/v1/analytics/posts", headers=key.headers).json()["data"]
        assert sorted(item["platform"] for item in posts) == ["mastodon", "twitter"]
        overview = client.get("/api/v1/analytics/overview", headers=key.headers, params={"period": "7d"}).json()["data"]
        assert overview["totals"]["posts"] == 1


def test_the_posts_a_job_settles_together_are_announced_and_enrolled_together(client, key, session, pipeline):
    from persistence.calendar import CalendarActivity
    from persistence.events import Event
    from socialpub.posts.changes import POSTS

    published = []
    with clock.installed(clock.FakeClock(NOW)) as now:
        due = NOW + dt.timedelta(minutes=1)
        made = set()
        for number in range(3):
            created = client.post("/api/v1/posts", headers=key.headers, json={
                "content": f"Out now, part {number}", "platforms": ["twitter"], "scheduledAt": due.isoformat(),
            })
            assert created.status_code == 201, created.text
            made.add(created.json()["data"]["id"])
        now.advance(61)
        with POSTS.subscribed(lambda change: published.append({str(post.id) for post in change.records}), "published"):
            pipeline.run()
    session.expire_all()
    # One slice took the three: one change names them all, and each reader did its part for each.
    assert published == [made]
    tracked = session.execute(select(TrackedPost.post_id)).scalars().all()
    assert sorted(map(str, tracked)) == sorted(made)
    entries = session.execute(select(CalendarActivity.post_id).where(CalendarActivity.type == "post.published"))
    assert sorted(str(post_id) for post_id in entries.scalars()) == sorted(made)
    events = session.execute(select(Event).where(Event.type == "post.published")).scalars().all()
    assert sorted(event.data["post"]["id"] for event in events) == sorted(made)
