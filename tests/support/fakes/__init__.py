"""Local fakes of the OAuth platforms (one module each, on tests.support.fakes.oauth),
and a fixture per fake: `x_server` and the like run a fresh one for the test. A pytest
plugin (tests/conftest.py)."""
from __future__ import annotations

from tests.support.fakes.twitter import FakeX
from tests.support.platform_servers import _served

# The fake of each OAuth platform, by the platform's name.
OAUTH_FAKES: dict[str, type] = {
    "twitter": FakeX,
}

# pytest names each fixture after the attribute it is bound to.
x_server = _served(FakeX)
