"""The Redis counters' asyncio clients: one per running event loop, kept while it
runs (an asyncio connection belongs to the loop that made it), forgotten once the
loop is closed. Two loops asking by turns each keep their client and count in one
window; a closed loop's client is dropped when a new loop asks."""
from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from limits import RateLimitItemPerMinute

from socialpub.ratelimit_redis import RedisCounters
from socialpub.ratelimit_windows import Window
from tests.support import backends
from tests.support.ratelimit import forget_counters, redis_url_for_db


@pytest.fixture
def redis_url():
    return redis_url_for_db(backends.require_redis())


@pytest.fixture
def identity(redis_url):
    name = f"key:{uuid.uuid4()}"
    yield name
    forget_counters(redis_url, [name])


WINDOWS = [Window("minute", RateLimitItemPerMinute(100), "100 requests per minute")]


def test_each_loop_keeps_its_client_and_a_closed_loop_loses_it(redis_url, identity):
    counters = RedisCounters(redis_url, socket_timeout=1.0)
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()

    def hit(loop):
        tally = loop.run_until_complete(counters.hit_async(identity, WINDOWS, time.time()))
        client = next(client for kept, client, _ in counters._async.values() if kept is loop)
        return tally.counts[0][0], client

    try:
        seen = [hit(loop) for loop in (first, second, first, second)]
        assert [count for count, _ in seen] == [1, 2, 3, 4]  # one window, whichever loop asked
        clients = [client for _, client in seen]
        assert clients[0] is clients[2] and clients[1] is clients[3] and clients[0] is not clients[1]
        assert {id(first), id(second)} == set(counters._async)

        first.run_until_complete(clients[0].aclose())
        first.close()
        third = asyncio.new_event_loop()
        try:
            count, _ = hit(third)
            assert count == 5
            assert set(counters._async) == {id(second), id(third)}  # the closed loop's client is gone
        finally:
            for loop in (second, third):
                loop.run_until_complete(next(c for k, c, _ in counters._async.values() if k is loop).aclose())
            third.close()
    finally:
        for loop in (first, second):
            if not loop.is_closed():
                loop.close()
