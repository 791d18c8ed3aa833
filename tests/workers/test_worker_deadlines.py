"""A worker notices a Redis that stops answering within seconds: its blocking wait for
jobs, and so the socket timeout RQ gives its connection, are short, and it tries a
lost Redis again every RECONNECT_SECONDS rather than backing off to a minute."""
from redis import Redis

from tests.support import backends
from workers import worker


def test_the_blocking_wait_and_its_socket_timeout_are_short():
    connection = Redis.from_url(backends.require_redis(), socket_connect_timeout=0.5, socket_timeout=0.5)
    made = worker.make_worker(connection)
    assert made.dequeue_timeout == 5
    assert connection.connection_pool.connection_kwargs["socket_timeout"] == 15
    assert made.max_connection_wait_time == worker.RECONNECT_SECONDS <= 5
