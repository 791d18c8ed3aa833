"""Settings for an app under test: generous limits, responses validated against the
contract, jobs run inline one at a time unless a Redis is given."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from socialpub.config import Settings

# Uploads and image variants of the run's apps: a directory of the run's own, removed
# at its end (not the repository's var/).
FILES_DIR = Path(tempfile.mkdtemp(prefix="socialpub-test-files-"))
atexit.register(shutil.rmtree, FILES_DIR, True)


def test_settings(database_url: str, redis_url: str | None = None, **overrides) -> Settings:
    values = dict(
        database_url=database_url,
        redis_url=redis_url,
        validate_responses=True,
        # Generous limits: the rate-limit tests make their own apps with tight ones.
        rate_limit_anonymous_per_minute=100_000,
        rate_limit_ceiling_per_minute=100_000,
        rate_limit_default_per_minute=100_000,
        rate_limit_default_per_day=100_000,
        queue_backend="rq" if redis_url else "inline",
        # One job at a time: jobs share the test's single database connection.
        inline_job_workers=1,
        publish_max_attempts=3,
        retry_base_seconds=1.0,
        log_level="WARNING",
        log_json=False,
        uploads_dir=str(FILES_DIR / "uploads"),
        image_cache_dir=str(FILES_DIR / "image-cache"),
    )
    values.update(overrides)
    return Settings(**values)


test_settings.__test__ = False  # a helper, not a test, wherever it is imported
