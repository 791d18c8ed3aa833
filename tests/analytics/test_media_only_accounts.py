"""A live account of a platform that takes no post from this API (YouTube here) is
connected for its followers: the sweep enrols it without any post, and its followers
are measured; a test-mode sandbox account of such a platform is not."""
from __future__ import annotations

from sqlalchemy import select

from persistence.analytics import FollowerSnapshot, TrackedAccount
from socialpub import clock
from socialpub.analytics import jobs
from tests.analytics.conftest import NOW, add_account
from tests.support.jobs import HeldQueue
from workers import context


def test_a_live_media_only_account_is_measured_without_posts(db, session, workspace, settings, youtube_server,
                                                              monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    user_id = next(iter(youtube_server.users))
    access, refresh = youtube_server.issue(user_id)
    account = add_account(session, workspace, livemode=True, platform="youtube", connector="youtube", handle="@acme",
                          options={"api_url": youtube_server.base_url + "/api", "channel_id": user_id},
                          secrets={"access_token": access, "refresh_token": refresh})
    held = HeldQueue()
    previous = (context._database, context._queue, context._settings)
    context.install(db, queue=held, settings=settings)
    try:
        with clock.installed(clock.FakeClock(NOW)):
            jobs.snapshot_metrics()
            held.drain()
    finally:
        held.close()
        context._database, context._queue, context._settings = previous
    session.expire_all()
    tracked = session.execute(select(TrackedAccount)).scalars().all()
    assert [row.account_id for row in tracked] == [account.id]
    [snapshot] = session.execute(select(FollowerSnapshot)).scalars().all()
    assert snapshot.account_id == account.id and snapshot.followers == youtube_server.follower_count()
