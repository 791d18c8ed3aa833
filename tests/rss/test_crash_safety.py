"""A real `socialpub worker` on PostgreSQL and RQ killed (SIGKILL) in the middle of an
auto feed's fetch: after a restart every entry is one item, published once, as one
post that goes out; none is left `new`, none is `published` without its post
going out, and no post is made twice.

The worker kills itself at a chosen point: a `sitecustomize` module the test puts on
the worker's PYTHONPATH arms `arm_crash_point` (below), which wraps the function at
that point so that the process sends itself SIGKILL there, the Nth time it is
reached. The points are the windows of the fetch of an auto feed: its items stored
and none published yet; a post created and its item not yet marked published; some
items published and the fetch not yet over; and the fetch recorded, before RQ hears
of it.
"""
from __future__ import annotations

import datetime as dt
import os
import signal
import time
import uuid

import pytest
from sqlalchemy import func, select

from persistence.events import Event
from persistence.posts import Post, PostTarget
from persistence.rss import RssFeed, RssItem
from persistence.types import utcnow
from socialpub.rss import template as templates
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.feed_server import FeedServer, rss2
from tests.support.processes import PROJECT_ROOT, wait_registered

pytestmark = pytest.mark.slow

ENTRIES = 12
CRASH_ENV = "SOCIALPUB_TEST_RSS_CRASH_AT"
WORKER_ENV = {
    # The feed is claimed within a moment, and a killed fetch's lease runs out in 2 s.
    "SOCIALPUB_RSS_DISPATCH_INTERVAL_SECONDS": "0.2",
    "SOCIALPUB_RSS_LEASE_SECONDS": "2",
    "SOCIALPUB_OUTBOUND_ALLOW_HOSTS": "127.0.0.1",
}
# point: (what is wrapped, whether the process dies before or after the wrapped call)
POINTS = {
    "items stored, none published": ("socialpub.rss.items:publish", "before", 1),
    "post created, item not yet published": ("socialpub.posts.service:add_post", "after", 4),
    "items published, fetch not over": ("socialpub.rss.items:publish", "after", 4),
    "fetch recorded, job not finished": ("socialpub.rss.fetching:fetch_feed", "after", 1),
}


def arm_crash_point(point: str) -> None:
    """In the worker process (from its sitecustomize): SIGKILL at `point`."""
    import importlib

    target, when, nth = POINTS[point]
    module_name, name = target.split(":")
    module = importlib.import_module(module_name)
    real = getattr(module, name)
    reached = [0]

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def wrapped(*args, **kwargs):
        reached[0] += 1
        if when == "before" and reached[0] == nth:
            die()
        result = real(*args, **kwargs)
        if when == "after" and reached[0] == nth:
            die()
        return result

    setattr(module, name, wrapped)


SITECUSTOMIZE = f"""
import os
if os.environ.get({CRASH_ENV!r}):
    from tests.rss.test_crash_safety import arm_crash_point
    arm_crash_point(os.environ[{CRASH_ENV!r}])
"""


@pytest.fixture
def redis_url():
    """The run's own Redis database (TEST_REDIS_URL), emptied before and after."""
    from redis import Redis

    url = backends.require_redis()
    connection = Redis.from_url(url)
    connection.flushdb()
    yield url
    connection.flushdb()
    connection.close()


@pytest.fixture
def feeds():
    with FeedServer() as server:
        yield server


def entries() -> list[dict]:
    return [dict(title=f"Entry {number}", link=f"https://example.com/entries/{number}", guid=f"entry-{number}",
                 pubDate=f"Tue, {1 + number:02d} Dec 2026 10:00:00 GMT") for number in range(ENTRIES)]


def follow_primed_auto_feed(database, url: str) -> tuple[uuid.UUID, uuid.UUID]:
    """A business workspace (its test-mode accounts are the sandbox) following `url`
    in auto mode, already primed (its backlog read before), due now."""
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="RSS crash safety", plan="business")
        now = utcnow()
        feed = RssFeed(
            workspace_id=workspace.id, livemode=False, url=url, title=None, title_given=False, status="active",
            mode="auto", platforms=["twitter"], template=templates.DEFAULT_TEMPLATE, fetch_interval_minutes=60,
            max_items_per_fetch=50, next_fetch_at=now, primed_at=now - dt.timedelta(hours=1),
            consecutive_failures=0,
        )
        session.add(feed)
        session.flush()
        return workspace.id, feed.id


def state(database, feed_id) -> dict:
    with database.transaction() as session:
        items = session.execute(select(RssItem.status, RssItem.post_id).where(RssItem.feed_id == feed_id)).all()
        posts = dict(session.execute(select(Post.status, func.count()).group_by(Post.status)).all())
        feed = session.get(RssFeed, feed_id)
        return {
            "items": [status for status, _ in items],
            "post_ids": [post_id for _, post_id in items],
            "posts": posts,
            "feed": (feed.last_error, feed.consecutive_failures, feed.claim_token),
        }


def wait_for(condition, timeout: float, alive, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        for worker in alive:
            assert worker.alive, f"{worker.name} exited:\n{worker.output()}"
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


@pytest.mark.parametrize("point", list(POINTS))
def test_a_worker_killed_in_an_auto_feeds_fetch_loses_and_doubles_nothing(
    redis_url, crash_database, feeds, workers, tmp_path, point, capsys
):
    database = crash_database
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    # The hook first, then the project (for `tests`), then whatever the run had.
    hook_path = os.pathsep.join([str(tmp_path / "hook"), str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")])
    url = feeds.serve("/feed.xml", rss2("Crash blog", entries()))
    _, feed_id = follow_primed_auto_feed(database, url)

    first = workers("worker-1", redis_url, **WORKER_ENV, PYTHONPATH=hook_path, **{CRASH_ENV: point})
    deadline = time.monotonic() + 60
    while first.alive:
        assert time.monotonic() < deadline, f"the worker never reached {point!r}:\n{first.output()}"
        time.sleep(0.05)
    assert first.process.returncode == -signal.SIGKILL, first.output()
    at_kill = state(database, feed_id)

    second = workers("worker-2", redis_url, **WORKER_ENV)
    wait_registered(redis_url, 1, [second])

    def all_out():
        now = state(database, feed_id)
        return now if now["posts"].get("published", 0) >= ENTRIES and len(now["items"]) >= ENTRIES else None

    wait_for(all_out, 90, [second], f"every entry published after the kill at {point!r}: {state(database, feed_id)}")
    time.sleep(1)  # anything still to come (a second fetch, a second post) has time to show
    second.stop()

    done = state(database, feed_id)
    assert done["items"] == ["published"] * ENTRIES, "every entry one item, none left new"
    assert len(set(done["post_ids"])) == ENTRIES and None not in done["post_ids"]
    assert done["posts"] == {"published": ENTRIES}, "each item's post went out, and no post was made twice"
    assert done["feed"] == (None, 0, None)
    with database.transaction() as session:
        targets = session.execute(select(PostTarget.status, func.count()).group_by(PostTarget.status)).all()
        item_events = session.execute(
            select(func.count()).select_from(Event).where(Event.type == "rss.item.created")
        ).scalar_one()
    assert dict(targets) == {"published": ENTRIES}
    assert item_events == ENTRIES
    with capsys.disabled():
        print(f"\n[rss crash safety] killed at {point!r} with {len(at_kill['items'])} items and posts "
              f"{at_kill['posts']} committed; after the restart {ENTRIES} items, {ENTRIES} posts published, "
              f"none new, none twice")
