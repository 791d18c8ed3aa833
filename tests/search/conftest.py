"""The rss area's feed server and jobs, for the rss-items index."""
from tests.rss.conftest import feeds, jobs  # noqa: F401 - fixtures
