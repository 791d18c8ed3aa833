"""RateLimiter on its own: which windows a caller gets, how a decision is reported,
and what happens when Redis cannot be reached."""
from __future__ import annotations

import datetime as dt
import logging
import uuid

import pytest

from socialpub.app import create_app
from socialpub.config import Settings
from socialpub.principal import Principal
from socialpub.ratelimit import RateLimiter
from tests.support.settings import test_settings
from tests.support.factories import make_key
from workers import context as job_context

UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"


def principal(per_minute=None, per_day=None) -> Principal:
    return Principal(
        api_key_id=uuid.uuid4(),
        workspace_id=uuid.uuid4(),
        livemode=False,
        scopes=frozenset({"posts:read"}),
        plan="business",
        per_minute=per_minute,
        per_day=per_day,
        valid_until=None,
    )


def shape(windows) -> list[tuple[str, int, int]]:
    """(name, amount, seconds) of each window."""
    return [(w.name, w.item.amount, w.item.get_expiry()) for w in windows]


class TestWindowsFor:
    def test_key_without_custom_limits_gets_the_defaults(self):
        caller = principal()
        identity, windows = RateLimiter(Settings()).windows_for(caller)
        assert identity == f"key:{caller.api_key_id}"
        assert shape(windows) == [("minute", 60, 60), ("day", 10_000, 86_400)]

    def test_defaults_follow_the_settings(self):
        settings = Settings(rate_limit_default_per_minute=30, rate_limit_default_per_day=500, rate_limit_ceiling_per_minute=90)
        _, windows = RateLimiter(settings).windows_for(principal())
        assert shape(windows) == [("minute", 30, 60), ("day", 500, 86_400)]

    def test_custom_limits_replace_the_defaults(self):
        _, windows = RateLimiter(Settings()).windows_for(principal(per_minute=25, per_day=400))
        assert shape(windows) == [("minute", 25, 60), ("day", 400, 86_400)]

    def test_ceiling_caps_a_custom_minute_limit(self):
        _, windows = RateLimiter(Settings()).windows_for(principal(per_minute=500, per_day=100_000))
        assert shape(windows) == [("minute", 100, 60), ("day", 100_000, 86_400)]
        assert windows[0].description == "the service ceiling of 100 requests per minute"

    def test_ceiling_caps_the_default_minute_limit(self):
        _, windows = RateLimiter(Settings(rate_limit_ceiling_per_minute=40)).windows_for(principal())
        assert shape(windows)[:1] == [("minute", 40, 60)]
        assert "service ceiling" in windows[0].description

    def test_ceiling_is_read_from_the_environment(self, monkeypatch):
        monkeypatch.setenv("SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", "7")
        settings = Settings.from_env()
        assert settings.rate_limit_ceiling_per_minute == 7
        _, windows = RateLimiter(settings).windows_for(principal(per_minute=20))
        assert shape(windows)[:1] == [("minute", 7, 60)]
        assert "service ceiling of 7" in windows[0].description

    def test_ceiling_defaults_to_100_without_the_environment_variable(self, monkeypatch):
        monkeypatch.delenv("SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", raising=False)
        assert Settings.from_env().rate_limit_ceiling_per_minute == 100

    def test_anonymous_callers_get_one_minute_window_at_the_anonymous_limit(self):
        identity, windows = RateLimiter(Settings(rate_limit_anonymous_per_minute=12)).windows_for(None)
        assert identity == "anonymous"
        assert shape(windows) == [("minute", 12, 60)]


class TestDecisions:
    def test_exact_count_and_remaining(self):
        limiter = RateLimiter(Settings(rate_limit_default_per_minute=3))
        identity, windows = limiter.windows_for(principal())
        decisions = [limiter.hit(identity, windows) for _ in range(4)]
        assert [d.allowed for d in decisions] == [True, True, True, False]
        assert [(d.limit, d.remaining) for d in decisions] == [(3, 2), (3, 1), (3, 0), (3, 0)]
        assert decisions[3].refused_by.name == "minute"
        assert [d.refused_by for d in decisions[:3]] == [None, None, None]

    def test_a_request_refused_by_the_minute_window_is_not_counted_in_the_day(self):
        limiter = RateLimiter(Settings(rate_limit_default_per_minute=2, rate_limit_default_per_day=1000))
        identity, windows = limiter.windows_for(principal())
        for _ in range(5):
            limiter.hit(identity, windows)
        day = windows[1]
        _, remaining = limiter._counters.local.get_window_stats(day.item, identity, day.name)
        assert remaining == 998

    def test_refused_decision_names_the_ceiling_when_it_refuses(self):
        limiter = RateLimiter(Settings(rate_limit_ceiling_per_minute=2))
        identity, windows = limiter.windows_for(principal(per_minute=50))
        decisions = [limiter.hit(identity, windows) for _ in range(3)]
        assert "service ceiling of 2" in decisions[2].refused_by.description
        assert 1 <= decisions[2].retry_after <= 60

    def test_refused_decision_names_the_day_when_it_frees_last(self):
        limiter = RateLimiter(Settings())
        identity, windows = limiter.windows_for(principal(per_minute=2, per_day=2))
        decisions = [limiter.hit(identity, windows) for _ in range(3)]
        assert decisions[2].refused_by.name == "day"
        assert decisions[2].retry_after > 86_400 - 60

    def test_reset_header_is_whole_seconds_rounded_up(self):
        limiter = RateLimiter(Settings())
        identity, windows = limiter.windows_for(principal())
        decision = limiter.hit(identity, windows)
        headers = decision.headers()
        assert headers["X-RateLimit-Reset"].endswith("Z")
        reset = dt.datetime.fromisoformat(headers["X-RateLimit-Reset"]).timestamp()
        assert decision.reset_at <= reset < decision.reset_at + 1


class TestRedisUnreachable:
    def test_limiter_counts_in_process_memory_instead(self, caplog):
        limiter = RateLimiter(Settings(redis_url=UNREACHABLE_REDIS, rate_limit_default_per_minute=2))
        assert limiter.shares_counters
        identity, windows = limiter.windows_for(principal())
        with caplog.at_level(logging.WARNING, logger="socialpub.ratelimit"):
            decisions = [limiter.hit(identity, windows) for _ in range(3)]
        assert [d.allowed for d in decisions] == [True, True, False]
        assert [d.remaining for d in decisions] == [1, 0, 0]
        assert any("unreachable" in record.getMessage() for record in caplog.records)

    def test_memory_storage_failure_is_not_hidden(self, monkeypatch):
        # Without Redis there is nothing to fall back to: a failure is a failure.
        limiter = RateLimiter(Settings())

        def broken(*_args, **_kwargs):
            raise RuntimeError("storage broke")

        monkeypatch.setattr(limiter._counters.local, "hit", broken)
        identity, windows = limiter.windows_for(principal())
        with pytest.raises(RuntimeError):
            limiter.hit(identity, windows)

    def test_api_keeps_limiting_without_500(self, database_url, db, session, workspace):
        key = make_key(session, workspace)
        saved = (job_context._database, job_context._queue, job_context._settings)
        settings = test_settings(
            database_url, UNREACHABLE_REDIS, queue_backend="inline", rate_limit_default_per_minute=3, rate_limit_anonymous_per_minute=2
        )
        application = create_app(settings, database=db)
        try:
            with application.test_client() as client:
                responses = [client.get("/api/v1/posts", headers=key.headers) for _ in range(4)]
                anonymous = [client.get("/api/v1/posts") for _ in range(3)]
        finally:
            application.app.extensions["socialpub"].queue.close()
            job_context._database, job_context._queue, job_context._settings = saved
        assert [r.status_code for r in responses] == [200, 200, 200, 429]
        assert [r.headers["X-RateLimit-Remaining"] for r in responses] == ["2", "1", "0", "0"]
        assert responses[3].json()["error"]["code"] == "rate_limit_exceeded"
        assert [r.status_code for r in anonymous] == [401, 401, 429]
