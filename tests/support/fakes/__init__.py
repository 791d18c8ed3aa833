"""Local fakes of the OAuth platforms (one module each, on tests.support.fakes.oauth),
and a fixture per fake: `x_server` and the like run a fresh one for the test. A pytest
plugin (tests/conftest.py)."""
from __future__ import annotations

from tests.support.fakes.facebook import FakeFacebook
from tests.support.fakes.instagram import FakeInstagram
from tests.support.fakes.linkedin import FakeLinkedIn
from tests.support.fakes.pinterest import FakePinterest
from tests.support.fakes.threads import FakeThreads
from tests.support.fakes.tiktok import FakeTikTok
from tests.support.fakes.twitter import FakeX
from tests.support.fakes.youtube import FakeYouTube
from tests.support.platform_servers import _served

# The fake of each OAuth platform, by the platform's name.
OAUTH_FAKES: dict[str, type] = {
    "twitter": FakeX,
    "facebook": FakeFacebook,
    "youtube": FakeYouTube,
    "pinterest": FakePinterest,
    "linkedin": FakeLinkedIn,
    "instagram": FakeInstagram,
    "tiktok": FakeTikTok,
    "threads": FakeThreads,
}

# pytest names each fixture after the attribute it is bound to.
x_server = _served(FakeX)
facebook_server = _served(FakeFacebook)
youtube_server = _served(FakeYouTube)
pinterest_server = _served(FakePinterest)
linkedin_server = _served(FakeLinkedIn)
instagram_server = _served(FakeInstagram)
tiktok_server = _served(FakeTikTok)
threads_server = _served(FakeThreads)
