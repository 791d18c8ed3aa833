"""The rate-limit windows of DESIGN.md section 4, counted exactly, through the API.

Counters are kept where the run configures them: in process memory on the SQLite
run, in Redis (a database of their own) on the PostgreSQL run. Every test makes its
own app with tight limits; counters are per key and per client address, and every
test uses fresh keys and addresses, so tests never share a counter.
"""
from __future__ import annotations

import contextlib
import time

import pytest
from sqlalchemy import select

from persistence.keys import ApiKey
from socialpub.app import create_app
from tests.support import backends
from tests.support.settings import test_settings
from tests.support.factories import make_key, make_workspace
from tests.support.ratelimit import (
    forget_counters,
    limit_headers,
    redis_url_for_db,
    reset_epoch,
    unique_address,
)
from workers import context as job_context
from tests.support.factories import OPERATOR

URL = "/api/v1/posts"
DAY = 24 * 3600


class Limited:
    """Builds apps with tight limits and clients with their own client address."""

    def __init__(self, database_url, db, redis_url):
        self.database_url = database_url
        self.db = db
        self.redis_url = redis_url
        self.addresses: list[str] = []
        self.apps = []
        self.stack = contextlib.ExitStack()
        # Building an app installs its queue for jobs; the suite's own is put back after.
        self.job_context = (job_context._database, job_context._queue, job_context._settings)

    def app(self, **limits):
        settings = test_settings(self.database_url, self.redis_url, queue_backend="inline", **limits)
        application = create_app(settings, database=self.db)
        self.apps.append(application)
        return application

    def client(self, application, address: str | None = None):
        address = address or unique_address()
        self.addresses.append(address)
        return self.stack.enter_context(application.test_client(client=(address, 50000)))

    def close(self):
        self.stack.close()
        for application in self.apps:
            application.app.extensions["socialpub"].queue.close()
        job_context._database, job_context._queue, job_context._settings = self.job_context


@pytest.fixture
def limiter_redis_url():
    """None on the SQLite run (counters in process memory); Redis on the PostgreSQL run."""
    if backends.BACKEND != "postgres":
        return None
    return redis_url_for_db(backends.require_redis())


@pytest.fixture
def limited(database_url, db, session, limiter_redis_url):
    helper = Limited(database_url, db, limiter_redis_url)
    yield helper
    helper.close()
    if limiter_redis_url:
        key_ids = session.execute(select(ApiKey.id)).scalars().all()
        identities = [f"key:{key_id}" for key_id in key_ids] + [f"address:{a}" for a in helper.addresses]
        forget_counters(limiter_redis_url, identities)


def send(client, n: int, headers=None, path: str = URL, **options) -> list:
    return [client.get(path, headers=headers or {}, **options) for _ in range(n)]


def codes(responses) -> list[int]:
    return [response.status_code for response in responses]


def assert_unauthenticated(client, limits: tuple[int, int]) -> None:
    """A request without a key is refused (401), with these (limit, remaining) headers."""
    response = client.get(URL)
    assert response.status_code == 401
    assert limit_headers(response) == limits


def assert_rate_limited(response):
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == "rate_limit_exceeded"
    return body["error"]["message"]


class TestMinuteWindow:
    @pytest.mark.parametrize("per_minute", [1, 3, 7])
    def test_default_minute_limit_allows_exactly_n_requests(self, limited, session, workspace, per_minute):
        key = make_key(session, workspace)
        client = limited.client(limited.app(rate_limit_default_per_minute=per_minute))
        responses = send(client, per_minute + 2, key.headers)
        assert codes(responses) == [200] * per_minute + [429, 429]
        assert f"{per_minute} requests per minute" in assert_rate_limited(responses[per_minute])

    def test_custom_minute_limit_below_the_default_is_exact(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=2)
        client = limited.client(limited.app(rate_limit_default_per_minute=5))
        assert codes(send(client, 3, key.headers)) == [200, 200, 429]

    def test_custom_minute_limit_above_the_default_is_exact(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=6)
        client = limited.client(limited.app(rate_limit_default_per_minute=2))
        assert codes(send(client, 7, key.headers)) == [200] * 6 + [429]

    def test_errors_count_against_the_minute_limit(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=3)
        client = limited.client(limited.app())
        assert client.get("/api/v1/no-such-route", headers=key.headers).status_code == 404
        assert client.get(URL, headers=key.headers, params={"limit": 0}).status_code == 422
        assert codes(send(client, 2, key.headers)) == [200, 429]


class TestDayWindow:
    def test_custom_day_limit_allows_exactly_n_requests(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=1000, per_day=3)
        client = limited.client(limited.app(rate_limit_default_per_minute=1000))
        started = time.time()
        responses = send(client, 5, key.headers)
        assert codes(responses) == [200, 200, 200, 429, 429]
        assert "3 requests per day" in assert_rate_limited(responses[3])
        assert limit_headers(responses[3]) == (3, 0)
        assert int(responses[3].headers["Retry-After"]) > DAY - 120
        assert reset_epoch(responses[3]) >= started + DAY

    def test_default_day_limit_applies_to_keys_without_a_custom_one(self, limited, session, workspace):
        key = make_key(session, workspace)
        client = limited.client(limited.app(rate_limit_default_per_day=2))
        assert codes(send(client, 3, key.headers)) == [200, 200, 429]

    def test_when_minute_and_day_are_both_full_the_day_decides_retry_after(self, limited, session, workspace):
        # Waiting for the minute window would not help: the client must be told the day.
        key = make_key(session, workspace, per_minute=3, per_day=3)
        client = limited.client(limited.app())
        started = time.time()
        responses = send(client, 4, key.headers)
        assert codes(responses) == [200, 200, 200, 429]
        message = assert_rate_limited(responses[3])
        assert "3 requests per day" in message
        assert int(responses[3].headers["Retry-After"]) > DAY - 120
        assert reset_epoch(responses[3]) >= started + DAY


class TestServiceCeiling:
    def test_ceiling_caps_a_larger_custom_minute_limit(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=10)
        client = limited.client(limited.app(rate_limit_ceiling_per_minute=4))
        responses = send(client, 6, key.headers)
        assert codes(responses) == [200] * 4 + [429, 429]
        assert "service ceiling of 4 requests per minute" in assert_rate_limited(responses[4])
        assert [limit_headers(r) for r in responses[:4]] == [(4, 3), (4, 2), (4, 1), (4, 0)]

    def test_ceiling_caps_a_larger_default_minute_limit(self, limited, session, workspace):
        key = make_key(session, workspace)
        client = limited.client(limited.app(rate_limit_ceiling_per_minute=2, rate_limit_default_per_minute=50))
        responses = send(client, 3, key.headers)
        assert codes(responses) == [200, 200, 429]
        assert "service ceiling of 2 requests per minute" in assert_rate_limited(responses[2])


class TestRateLimitHeaders:
    def test_success_headers_count_down_by_one(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=5)
        client = limited.client(limited.app())
        started = time.time()
        responses = send(client, 5, key.headers)
        finished = time.time()
        assert codes(responses) == [200] * 5
        assert [limit_headers(r) for r in responses] == [(5, 4), (5, 3), (5, 2), (5, 1), (5, 0)]
        for response in responses:
            assert started + 60 <= reset_epoch(response) <= finished + 61

    def test_reset_is_not_before_the_window_frees_a_request(self, limited, session, workspace):
        # A client that waits until X-RateLimit-Reset must not be refused again.
        key = make_key(session, workspace, per_minute=2)
        client = limited.client(limited.app())
        started = time.time()
        responses = send(client, 3, key.headers)
        assert codes(responses) == [200, 200, 429]
        for response in responses:
            assert reset_epoch(response) >= started + 60

    @pytest.mark.parametrize(
        "method, path, params, status",
        [
            ("GET", "/api/v1/no-such-route", None, 404),
            ("GET", URL, {"limit": 0}, 422),
            ("PUT", URL, None, 405),
        ],
        ids=["404-unknown-route", "422-validation", "405-method"],
    )
    def test_error_responses_carry_the_headers_of_the_key(self, limited, session, workspace, method, path, params, status):
        key = make_key(session, workspace, per_minute=4)
        client = limited.client(limited.app())
        assert limit_headers(client.get(URL, headers=key.headers)) == (4, 3)
        response = client.request(method, path, headers=key.headers, params=params)
        assert response.status_code == status, response.text
        assert response.json()["success"] is False
        assert limit_headers(response) == (4, 2)
        assert reset_epoch(response) > time.time()
        assert response.headers["X-Request-Id"]

    def test_insufficient_scope_carries_the_headers(self, limited, session, workspace):
        key = make_key(session, workspace, scopes=["analytics:read"], per_minute=4)
        client = limited.client(limited.app())
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
        assert limit_headers(response) == (4, 3)

    def test_unauthenticated_response_carries_the_headers_of_the_address(self, limited):
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=7))
        responses = send(client, 2)
        assert codes(responses) == [401, 401]
        assert [limit_headers(r) for r in responses] == [(7, 6), (7, 5)]
        assert all(reset_epoch(r) > time.time() for r in responses)

    def test_429_is_the_error_envelope_with_retry_after_matching_reset(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=2)
        client = limited.client(limited.app())
        send(client, 2, key.headers)
        before = time.time()
        response = client.get(URL, headers=key.headers)
        after = time.time()
        message = assert_rate_limited(response)
        assert response.headers["content-type"].startswith("application/json")
        assert set(response.json()) == {"success", "error"}
        assert set(response.json()["error"]) == {"code", "message"}
        assert response.headers["X-Request-Id"]
        assert limit_headers(response) == (2, 0)
        retry_after = response.headers["Retry-After"]
        assert retry_after.isdigit() and 1 <= int(retry_after) <= 60
        assert f"Retry in {retry_after} seconds" in message
        # Retry-After and X-RateLimit-Reset name the same moment (to the second).
        moment = reset_epoch(response) - int(retry_after)
        assert before - 1 <= moment <= after + 1


class TestRequestsWithoutAValidKey:
    def test_are_limited_per_client_address(self, limited):
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=3))
        responses = send(client, 5)
        assert codes(responses) == [401, 401, 401, 429, 429]
        assert "3 requests per minute" in assert_rate_limited(responses[3])
        assert limit_headers(responses[3]) == (3, 0)

    def test_missing_malformed_and_unknown_keys_share_the_address_counter(self, limited):
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=3))
        unknown = "svc_test_" + "A" * 40
        attempts = [{}, {"Authorization": "Bearer not-a-key"}, {"Authorization": f"Bearer {unknown}"}, {"Authorization": f"Bearer {unknown}"}]
        assert [client.get(URL, headers=h).status_code for h in attempts] == [401, 401, 401, 429]

    def test_another_address_has_its_own_allowance(self, limited):
        application = limited.app(rate_limit_anonymous_per_minute=2)
        first, second = limited.client(application), limited.client(application)
        assert codes(send(first, 3)) == [401, 401, 429]
        assert_unauthenticated(second, (2, 1))

    def test_do_not_consume_the_quota_of_a_valid_key(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=3)
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=10))
        assert codes(send(client, 5, {"Authorization": "Bearer svc_test_" + "B" * 40})) == [401] * 5
        responses = send(client, 4, key.headers)
        assert codes(responses) == [200, 200, 200, 429]
        assert limit_headers(responses[0]) == (3, 2)

    def test_requests_with_a_valid_key_do_not_consume_the_address_allowance(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=10)
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=2))
        assert codes(send(client, 5, key.headers)) == [200] * 5
        assert_unauthenticated(client, (2, 1))

    def test_revoked_key_is_counted_against_the_address(self, limited, session, workspace):
        from socialpub.keys import service as api_keys

        key = make_key(session, workspace, per_minute=10)
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=2))
        assert client.get(URL, headers=key.headers).status_code == 200
        api_keys.revoke_api_key(session=session, actor=OPERATOR, workspace_id=key.model.workspace_id, api_key_id=key.model.id)
        assert codes(send(client, 3, key.headers)) == [401, 401, 429]


    def test_behind_a_trusted_proxy_each_forwarded_address_has_its_own_allowance(self, limited):
        application = limited.app(rate_limit_anonymous_per_minute=2, trusted_proxy_hops=1)
        proxy = limited.client(application)
        first, second = unique_address(), unique_address()
        limited.addresses += [first, second]
        # A forged entry before the one our proxy added is not believed.
        assert codes(send(proxy, 3, {"X-Forwarded-For": f"198.51.100.7, {first}"})) == [401, 401, 429]
        assert proxy.get(URL, headers={"X-Forwarded-For": second}).status_code == 401

    def test_without_trusted_proxies_forwarded_addresses_are_ignored(self, limited):
        client = limited.client(limited.app(rate_limit_anonymous_per_minute=2))
        sent = [client.get(URL, headers={"X-Forwarded-For": unique_address()}) for _ in range(3)]
        assert codes(sent) == [401, 401, 429]


class TestKeysAreCountedSeparately:
    def test_two_keys_of_one_workspace_have_independent_counters(self, limited, session, workspace):
        first = make_key(session, workspace, per_minute=3)
        second = make_key(session, workspace, per_minute=3)
        client = limited.client(limited.app())
        assert codes(send(client, 4, first.headers)) == [200, 200, 200, 429]
        responses = send(client, 4, second.headers)
        assert codes(responses) == [200, 200, 200, 429]
        assert limit_headers(responses[0]) == (3, 2)

    def test_keys_of_different_workspaces_have_independent_counters(self, limited, session, workspace):
        other = make_workspace(session, name="Other")
        first = make_key(session, workspace)
        second = make_key(session, other)
        client = limited.client(limited.app(rate_limit_default_per_minute=2))
        assert codes(send(client, 3, first.headers)) == [200, 200, 429]
        assert codes(send(client, 3, second.headers)) == [200, 200, 429]

    def test_one_key_is_one_counter_across_client_addresses(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=3)
        application = limited.app()
        first, second = limited.client(application), limited.client(application)
        assert codes(send(first, 2, key.headers)) == [200, 200]
        assert codes(send(second, 2, key.headers)) == [200, 429]


class TestHeadersReportTheWindowNearestExhaustion:
    def test_day_window_when_it_has_fewer_requests_left(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=53, per_day=5)
        client = limited.client(limited.app())
        started = time.time()
        responses = send(client, 3, key.headers)
        assert codes(responses) == [200, 200, 200]
        # The minute window has 50 left, the day window 2.
        assert limit_headers(responses[-1]) == (5, 2)
        assert reset_epoch(responses[-1]) >= started + DAY

    def test_minute_window_when_it_has_fewer_requests_left(self, limited, session, workspace):
        key = make_key(session, workspace, per_minute=3, per_day=50)
        client = limited.client(limited.app())
        responses = send(client, 2, key.headers)
        assert limit_headers(responses[-1]) == (3, 1)
        assert reset_epoch(responses[-1]) <= time.time() + 61

    def test_the_window_with_fewer_requests_left_wins_whichever_it_is(self, limited, session, workspace):
        client = limited.client(limited.app())
        minute_nearer = make_key(session, workspace, per_minute=6, per_day=8)
        responses = send(client, 3, minute_nearer.headers)
        # minute left 5, 4, 3; day left 7, 6, 5
        assert [limit_headers(r) for r in responses] == [(6, 5), (6, 4), (6, 3)]
        assert reset_epoch(responses[-1]) <= time.time() + 61
        day_nearer = make_key(session, workspace, per_minute=8, per_day=6)
        responses = send(client, 3, day_nearer.headers)
        # minute left 7, 6, 5; day left 5, 4, 3
        assert [limit_headers(r) for r in responses] == [(6, 5), (6, 4), (6, 3)]
        assert reset_epoch(responses[-1]) > time.time() + DAY - 120


class TestCounterStorage:
    def test_counters_are_shared_by_apps_using_the_same_redis(self, database_url, db, session, workspace):
        # Two apps stand for two processes: with Redis, one key has one counter.
        redis_url = redis_url_for_db(backends.require_redis())
        key = make_key(session, workspace, per_minute=4)
        helper = Limited(database_url, db, redis_url)
        try:
            first = helper.client(helper.app())
            second = helper.client(helper.app())
            assert codes(send(first, 2, key.headers)) == [200, 200]
            responses = send(second, 3, key.headers)
            assert codes(responses) == [200, 200, 429]
            assert limit_headers(responses[0]) == (4, 1)
        finally:
            helper.close()
            assert forget_counters(redis_url, [f"key:{key.model.id}"]) > 0

    def test_without_redis_each_process_counts_in_its_own_memory(self, database_url, db, session, workspace):
        key = make_key(session, workspace, per_minute=2)
        helper = Limited(database_url, db, None)
        try:
            first = helper.client(helper.app())
            second = helper.client(helper.app())
            assert codes(send(first, 3, key.headers)) == [200, 200, 429]
            assert codes(send(second, 3, key.headers)) == [200, 200, 429]
        finally:
            helper.close()
