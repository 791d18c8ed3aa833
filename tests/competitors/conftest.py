"""Fakes of the platforms' public profiles, allowed through the outbound guard like
the other local servers; settings that point live competitors' readings at them; a
fake clock; jobs run as a worker would."""
from __future__ import annotations

import pytest

from socialpub import clock
from tests.listening.conftest import Jobs
from tests.support.fakes.profiles import (  # noqa: F401 (fixtures)
    bluesky_appview_server,
    mastodon_profiles_server,
)
from tests.support.jobs import HeldQueue
from tests.support.settings import test_settings


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


@pytest.fixture
def profile_settings(database_url, test_redis_url, bluesky_appview_server, mastodon_profiles_server, monkeypatch):
    """Settings whose live readings go to the fakes (the AppView, and one Mastodon instance)."""
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    return test_settings(
        database_url, test_redis_url, competitors_bluesky_url=bluesky_appview_server.base_url,
        competitors_mastodon_url=mastodon_profiles_server.base_url, competitors_refresh_timeout_seconds=2.0,
    )


@pytest.fixture
def jobs(app):
    runtime = app.app.extensions["socialpub"]
    if not isinstance(runtime.queue, HeldQueue):
        runtime.queue.queue.empty()
    return Jobs(runtime)
