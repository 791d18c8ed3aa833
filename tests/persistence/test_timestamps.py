"""A new record's updatedAt is its createdAt: one instant, read once (no fake clock
here: two readings of the real one differ)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from persistence.calendar import CalendarActivity
from persistence.posts import Post


def test_a_new_record_was_last_updated_when_it_was_created(client, key, session):
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    post = client.post("/api/v1/posts", headers=key.headers, json={
        "content": "Hello", "platforms": ["twitter"], "scheduledAt": tomorrow,
    }).json()["data"]
    assert post["updatedAt"] == post["createdAt"]
    session.expire_all()
    stored = session.execute(select(Post)).scalar_one()
    assert stored.updated_at == stored.created_at
    assert all(target.updated_at == target.created_at for target in stored.targets)
    entry = session.execute(select(CalendarActivity)).scalar_one()
    assert entry.updated_at == entry.created_at
    feed = client.get("/api/v1/calendar/activity", headers=key.headers).json()["data"]
    assert len(feed) == 1 and feed[0]["updatedAt"] == feed[0]["createdAt"]
