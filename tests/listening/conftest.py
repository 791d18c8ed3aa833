"""Fakes of the platforms' public search, allowed through the outbound guard like the
other local servers; settings that point live monitors' searches at them; a fake
clock; jobs run as a worker would."""
from __future__ import annotations

import pytest

from socialpub import clock
from tests.support.jobs import HeldQueue
from tests.support.search_servers import bluesky_search_server, mastodon_tags_server  # noqa: F401 (fixtures)
from tests.support.settings import test_settings


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


@pytest.fixture
def search_settings(database_url, test_redis_url, bluesky_search_server, mastodon_tags_server, monkeypatch):
    """Settings whose live searches read the fakes (Bluesky, and one Mastodon instance)."""
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    return test_settings(
        database_url, test_redis_url, listening_bluesky_url=bluesky_search_server.base_url,
        listening_mastodon_instances=mastodon_tags_server.base_url, listening_poll_timeout_seconds=2.0,
    )


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
