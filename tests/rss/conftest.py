"""A feed server for the test, allowed through the outbound guard like the other
local servers; settings with a short fetch timeout; jobs run as a worker would."""
from __future__ import annotations

import pytest

from socialpub import clock
from tests.support.feed_server import FeedServer
from tests.support.jobs import HeldQueue
from tests.support.settings import test_settings

FETCH_TIMEOUT_SECONDS = 1.0
MAX_FEED_BYTES = 2 * 1024 * 1024


@pytest.fixture
def settings(database_url, test_redis_url):
    return test_settings(database_url, test_redis_url, rss_timeout_seconds=FETCH_TIMEOUT_SECONDS,
                         rss_max_bytes=MAX_FEED_BYTES)


@pytest.fixture
def feeds(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with FeedServer() as server:
        yield server


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


class Jobs:
    def __init__(self, runtime):
        self.runtime = runtime

    def run(self) -> None:
        queue = self.runtime.queue
        if isinstance(queue, HeldQueue):
            queue.drain()
        else:
            from rq import SimpleWorker

            SimpleWorker([queue.queue], connection=queue.connection).work(burst=True)

    def held(self) -> int:
        return len(self.runtime.queue.waiting_job_ids())

    def lose_all(self) -> None:
        """The queue loses every job waiting in it (a Redis flushed, a crash)."""
        queue = self.runtime.queue
        if isinstance(queue, HeldQueue):
            queue.held.clear()
        else:
            queue.queue.empty()


@pytest.fixture
def jobs(app):
    runtime = app.app.extensions["socialpub"]
    if not isinstance(runtime.queue, HeldQueue):
        runtime.queue.queue.empty()
    return Jobs(runtime)
