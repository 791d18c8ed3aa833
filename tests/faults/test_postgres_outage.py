"""A PostgreSQL that freezes or stops under load never holds a request: the API keeps
answering within 2 s, with 503 service_unavailable in the envelope while the database
is gone, takes work again within 5 s of its return, and loses nothing it
acknowledged. The server is the test's own (tests/faults/conftest.py): frozen, every
process of it is SIGSTOPped, so connections are accepted and nothing answers (the
server's own statement timeout cannot fire); stopped, it goes down at once, as in a
crash, and comes back on the same port."""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from persistence.db import Database
from persistence.migrate import upgrade
from persistence.posts import Post
from socialpub.app import create_app
from tests.support.factories import make_key, make_workspace
from tests.support.settings import test_settings
from workers import context as job_context

DEADLINE = 2.0  # seconds any request may take, outage or not
RESUMED_WITHIN = 5.0  # seconds after the database returns
CLIENTS = 4


@dataclass
class Answer:
    started: float
    finished: float
    method: str
    content: str | None
    status: int
    body: dict


class Load:
    """CLIENTS threads sending creates and list reads without pause, each with its own
    client, recording every answer."""

    def __init__(self, application, headers):
        self.application, self.headers = application, headers
        self.answers: list[Answer] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.numbers = itertools.count()
        self.failures: list[BaseException] = []
        self.threads = [threading.Thread(target=self._client, daemon=True) for _ in range(CLIENTS)]

    def _client(self):
        try:
            self._send_until_stopped()
        except BaseException as failure:  # noqa: BLE001 - reported by __exit__
            self.failures.append(failure)

    def _send_until_stopped(self):
        with self.application.test_client() as client:
            while not self.stopping.is_set():
                number = next(self.numbers)
                content = f"load {number}" if number % 2 else None
                started = time.monotonic()
                if content:
                    response = client.post("/api/v1/posts", headers=self.headers, json={"content": content, "platforms": ["twitter"]})
                else:
                    response = client.get("/api/v1/posts?limit=5", headers=self.headers)
                answer = Answer(started, time.monotonic(), "POST" if content else "GET", content, response.status_code,
                                response.json())
                with self.lock:
                    self.answers.append(answer)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in self.threads), "a request never answered"
        assert not self.failures, self.failures

    def between(self, start: float, end: float) -> list[Answer]:
        with self.lock:
            return [answer for answer in self.answers if start <= answer.started and answer.finished <= end]

    def first_success_after(self, moment: float) -> float:
        with self.lock:
            return min((a.finished for a in self.answers if a.started >= moment and a.status < 300), default=float("inf"))


@dataclass
class Outage:
    beginning: float  # taking the database away began
    began: float  # it was gone
    ending: float  # bringing it back began
    ended: float  # it was back


def outage(go, come_back, *, after: float, lasting: float) -> Outage:
    """`after` seconds of service, then the database taken away by `go` for `lasting`
    seconds, and brought back by `come_back`."""
    time.sleep(after)
    beginning = time.monotonic()
    go()
    began = time.monotonic()
    time.sleep(lasting)
    ending = time.monotonic()
    come_back()
    return Outage(beginning, began, ending, time.monotonic())


@pytest.fixture
def outage_app(private_postgres):
    upgrade(private_postgres.url)
    saved = (job_context._database, job_context._queue, job_context._settings)
    settings = test_settings(
        private_postgres.url, queue_backend="inline", validate_responses=False,
        database_response_timeout_seconds=1.0, database_connect_timeout_seconds=1, database_pool_timeout_seconds=1.0,
        database_statement_timeout_seconds=1.0, database_lock_timeout_seconds=0.5,
    )
    application = create_app(settings)  # its own Database, from the settings
    with application.test_client() as client:
        # Builds the middleware stack once, before several clients start at once.
        client.get("/healthz")
    yield application
    application.app.extensions["socialpub"].close()
    job_context._database, job_context._queue, job_context._settings = saved


def test_a_frozen_then_crashed_database_never_holds_a_request_and_loses_nothing(outage_app, private_postgres):
    seeding = Database(private_postgres.url)
    with seeding.transaction() as session:
        key = make_key(session, make_workspace(session))
    with Load(outage_app, key.headers) as load:
        frozen = outage(private_postgres.freeze, private_postgres.thaw, after=1.0, lasting=3.0)
        crashed = outage(private_postgres.stop, private_postgres.start, after=4.0, lasting=3.0)
        time.sleep(4.0)
        ended_at = time.monotonic()

    answers = load.between(0, float("inf"))
    slowest = max(answers, key=lambda a: a.finished - a.started)
    assert slowest.finished - slowest.started < DEADLINE, slowest
    for answer in answers:
        assert answer.status in (200, 201, 503), answer
        assert answer.body["success"] is (answer.status < 300), answer
        if answer.status == 503:
            assert answer.body["error"]["code"] == "service_unavailable", answer
    for gone in (frozen, crashed):
        during = load.between(gone.began + DEADLINE, gone.ending)
        assert during and all(a.status == 503 for a in during), [a.status for a in during]
        assert load.first_success_after(gone.ended) - gone.ended < RESUMED_WITHIN
    # Once back, it stays back: the last second before the next fault went through.
    for settled_until in (crashed.beginning, ended_at):
        last_second = load.between(settled_until - 1.0, settled_until)
        assert last_second and all(a.status < 300 for a in last_second), [a.status for a in last_second]

    # Nothing acknowledged is lost (a create that timed out may or may not have been
    # committed: the client was told 503, and a retry is the caller's to make).
    acknowledged = {a.content for a in answers if a.method == "POST" and a.status == 201}
    with seeding.transaction() as session:
        stored = set(session.execute(select(Post.content)).scalars())
    assert acknowledged and acknowledged <= stored
    seeding.dispose()
