"""Real `socialpub worker` processes on PostgreSQL and RQ: a worker killed in the
middle of a run loses nothing and publishes nothing twice, and Redis going away while
posts fall due only delays them.

Each test makes its own PostgreSQL database (dropped at the end) and its own Redis: a
database of the test Redis server set apart for these tests, or a private
`redis-server` on a free port. The sandbox platform records every call it receives,
a row each (a repeat of a call it accepted returns the first receipt, as a `repeated`
row): a target is delivered once per accepted call for its idempotency key (the
target's id), every row is a call that a platform without idempotency keys would have
taken as a delivery, and `attempts` on the target counts the jobs that took it up.
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from sqlalchemy import event, func, insert, select

from persistence.db import Database
from persistence.accounts import ConnectedAccount
from persistence.sandbox import SandboxCall
from persistence.posts import Post, PostTarget
from persistence.workspaces import Workspace
from persistence.types import utcnow
from socialpub.workspaces import service as workspaces
from tests.support import backends
from tests.support.factories import make_key
from tests.support.processes import Worker, free_port, wait_registered
from tests.support.settings import test_settings

pytestmark = pytest.mark.slow

# These tests' queue lives in this database of the test Redis server, apart from the
# rest of the suite (database 0): a worker takes every job of its queue.
CRASH_REDIS_DB = 12


# -- services -----------------------------------------------------------------------

def redis_url_for_db(url: str, db: int) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


class PrivateRedis:
    """A redis-server of the test's own on a free loopback port, without persistence:
    stopping it loses everything it held, as a crashed Redis would."""

    def __init__(self, log_path: Path):
        self.binary = shutil.which("redis-server")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        from redis import Redis

        connection = Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                connection.ping()
                return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.05)
            finally:
                connection.close()
        raise AssertionError(f"redis-server on port {self.port} did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


# -- the data -------------------------------------------------------------------------

def make_sandbox_workspace(database: Database, **options) -> tuple[uuid.UUID, uuid.UUID]:
    """A business workspace; its test-mode twitter account (the sandbox) with options."""
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Crash safety", plan="business")
        account = session.execute(
            select(ConnectedAccount).where(
                ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.livemode.is_(False),
                ConnectedAccount.platform == "twitter",
            )
        ).scalar_one()
        account.options = dict(options)
        return workspace.id, account.id


def _commit_without_waiting_for_the_disk(dbapi_connection, _record):
    # These tests kill workers, not the database server: the API's commits need not
    # wait for the disk. The workers' connections are left as they are.
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
    dbapi_connection.commit()


def _create_posts_in_this_process(database_url: str, key_value: str, numbers: range) -> list[str]:
    """POST /posts through the app's test client, each post due a moment ahead.
    Returns the bodies of the requests that were refused."""
    from socialpub.app import create_app

    database = Database(database_url)
    event.listen(database.engine, "connect", _commit_without_waiting_for_the_disk)
    app = create_app(test_settings(database_url), database=database)
    refused = []
    try:
        with app.test_client() as client:
            for number in numbers:
                scheduled_at = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)).isoformat()
                response = client.post("/api/v1/posts", headers={"Authorization": f"Bearer {key_value}"}, json={
                    "content": f"Crash safety {number}", "platforms": ["twitter"], "scheduledAt": scheduled_at,
                })
                if response.status_code != 201:
                    refused.append(response.text)
    finally:
        app.app.extensions["socialpub"].close()
    return refused


def create_posts_through_the_api(database: Database, database_url: str, workspace_id, count: int) -> None:
    """Schedules `count` test-mode twitter posts a moment ahead, as users do: POST
    /posts through the app's test client against the test's database. A request costs
    the app about 10 ms of CPU, so the posts are shared among processes, one per core
    (at least two), each with an app of its own: making one here would also install
    its database as the one this process's jobs use."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with database.transaction() as session:
        key = make_key(session, session.get(Workspace, workspace_id), scopes=["posts:write"])
    processes = max(2, min(os.cpu_count() or 2, 4))
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        shares = [range(part, count, processes) for part in range(processes)]
        refused = [body for bodies in pool.map(_create_posts_in_this_process, [database_url] * processes,
                                                [key.value] * processes, shares) for body in bodies]
    assert refused == [], refused[:3]
    with database.transaction() as session:
        assert session.execute(select(func.count()).select_from(Post)).scalar_one() == count


def schedule_posts(database: Database, workspace_id, account_id, count: int, due: dt.datetime) -> None:
    """What scheduling a test-mode twitter post leaves behind (the post and its pending
    target on the sandbox account), inserted in bulk."""
    now = utcnow()
    common = dict(workspace_id=workspace_id, livemode=False, created_at=now, updated_at=now)
    posts, targets = [], []
    for number in range(count):
        post_id = uuid.uuid4()
        posts.append(dict(common, id=post_id, content=f"Crash safety {number}", platforms=["twitter"],
                          status="scheduled", scheduled_at=due))
        targets.append(dict(common, id=uuid.uuid4(), post_id=post_id, account_id=account_id, platform="twitter",
                            status="pending", attempts=0, comment_attempts=0, next_attempt_at=due))
    with database.transaction() as session:
        session.execute(insert(Post), posts)
        session.execute(insert(PostTarget), targets)


def published_targets(database: Database) -> int:
    with database.transaction() as session:
        return session.execute(
            select(func.count()).select_from(PostTarget).where(PostTarget.status == "published")
        ).scalar_one()


def wait_published(database: Database, at_least: int, timeout: float, alive: list[Worker]) -> float:
    """Until at least this many targets are published; returns the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if published_targets(database) >= at_least:
            return time.monotonic() - started
        for worker in alive:
            assert worker.alive, f"{worker.name} exited:\n{worker.output()}"
        time.sleep(0.05)
    raise AssertionError(
        f"only {published_targets(database)} of {at_least} targets published after {timeout:.0f} s"
    )


def assert_each_published_exactly_once(
    database: Database, expected: int, *, jobs_killed_mid_call: int = 0, calls_in_flight_per_job: int = 1
) -> dict:
    """Every post and target published, one delivery per target at the platform, with
    the receipt of that delivery, and the platform called again for no more keys than
    killed jobs can have had calls in flight (what a platform without idempotency keys
    would have received twice), each once more at most. Returns how often the platform
    was called: the sandbox's rows per key, and the targets a job took up more than once."""
    with database.transaction() as session:
        posts = dict(session.execute(select(Post.status, func.count()).group_by(Post.status)).all())
        targets = session.execute(select(PostTarget.id, PostTarget.status, PostTarget.external_id)).all()
        attempts = session.execute(select(PostTarget.attempts)).scalars().all()
        accepted = session.execute(
            select(SandboxCall.idempotency_key, SandboxCall.external_id).where(
                SandboxCall.kind == "post", SandboxCall.outcome == "accepted"
            )
        ).all()
        calls = dict(
            session.execute(
                select(SandboxCall.idempotency_key, func.count()).where(SandboxCall.kind == "post")
                .group_by(SandboxCall.idempotency_key)
            ).all()
        )
    assert posts == {"published": expected}
    assert len(targets) == expected
    assert {status for _, status, _ in targets} == {"published"}
    per_key: dict[str, list[str]] = {}
    for key, external_id in accepted:
        per_key.setdefault(key, []).append(external_id)
    assert len(accepted) == expected, "every target delivered once, none twice"
    assert {key: len(ids) for key, ids in per_key.items() if len(ids) != 1} == {}
    # No target lost, none delivered that is not a target, and each records the
    # receipt of its one delivery.
    assert {uuid.UUID(key) for key in per_key} == {target_id for target_id, _, _ in targets}
    assert {str(target_id): external_id for target_id, _, external_id in targets} == {
        key: ids[0] for key, ids in per_key.items()
    }
    called_again = {key: count for key, count in calls.items() if count > 1}
    # A killed job had at most calls_in_flight_per_job calls in flight (its
    # publish_concurrency; it holds no more claims than that): only those calls'
    # targets can have been called again, once, by the job that took them up after
    # their leases ran out.
    assert len(called_again) <= jobs_killed_mid_call * calls_in_flight_per_job, f"called more than once: {called_again}"
    assert all(count == 2 for count in called_again.values()), called_again
    return {
        "platform_calls": sum(calls.values()),
        "keys_called_more_than_once": len(called_again),
        "most_calls_for_one_key": max(calls.values()),
        "targets_attempted_more_than_once": sum(1 for count in attempts if count > 1),
    }


# -- the tests ------------------------------------------------------------------------

class TestWorkerKilledMidRun:
    POSTS = 1000
    # Calls a job keeps in flight, all of them on the one sandbox account: a kill
    # lands among several calls.
    CONCURRENCY = 8

    @pytest.fixture
    def redis_url(self):
        from redis import Redis

        url = redis_url_for_db(backends.require_redis(), CRASH_REDIS_DB)
        connection = Redis.from_url(url)
        connection.flushdb()
        yield url
        connection.flushdb()
        connection.close()

    def test_a_killed_worker_loses_nothing_and_publishes_nothing_twice(
        self, crash_database, crash_database_url, redis_url, workers, capsys
    ):
        database = crash_database
        # Latency at the platform (20-50 ms, as real ones vary), so that the kill lands
        # in the middle of jobs, with calls in flight.
        workspace_id, _ = make_sandbox_workspace(database, latencyMs=20, latencyJitterMs=30)
        # Due while the workers start: all of them waiting at once when the workers come.
        create_posts_through_the_api(database, crash_database_url, workspace_id, self.POSTS)
        concurrency = dict.fromkeys(
            ("SOCIALPUB_PUBLISH_CONCURRENCY", "SOCIALPUB_PUBLISH_CONCURRENCY_PER_ACCOUNT",
             "SOCIALPUB_PUBLISH_CONCURRENCY_PER_PLATFORM"), str(self.CONCURRENCY),
        )
        first, second = workers("worker-1", redis_url, **concurrency), workers("worker-2", redis_url, **concurrency)
        wait_registered(redis_url, 2, [first, second])

        wait_published(database, self.POSTS // 4, timeout=90, alive=[first, second])
        first.crash()
        at_kill = published_targets(database)
        assert at_kill < self.POSTS, "the run was over before the kill"
        replacement = workers("worker-3", redis_url, **concurrency)

        took = wait_published(database, self.POSTS, timeout=120, alive=[second, replacement])
        second.stop()
        replacement.stop()

        calls = assert_each_published_exactly_once(
            database, self.POSTS, jobs_killed_mid_call=1, calls_in_flight_per_job=self.CONCURRENCY
        )
        with capsys.disabled():
            print(
                f"\n[crash safety] {self.POSTS} posts; worker killed at {at_kill} published; all published "
                f"{took:.1f} s later; platform calls {calls['platform_calls']}, keys called more than once "
                f"{calls['keys_called_more_than_once']} (at most {calls['most_calls_for_one_key']} calls), targets "
                f"attempted more than once {calls['targets_attempted_more_than_once']}, deliveries {self.POSTS}, "
                f"duplicates 0"
            )


class TestRedisDownWhilePostsFallDue:
    POSTS = 50
    LEASE_SECONDS = 90

    @pytest.fixture
    def private_redis(self, tmp_path):
        backends.require_redis()
        redis = PrivateRedis(tmp_path / "redis.log")
        if redis.binary is None:
            backends.unavailable("redis-server is not on the PATH")
        redis.start()
        yield redis
        redis.kill()

    def test_posts_go_out_once_when_redis_is_back(self, crash_database, private_redis, workers, capsys):
        database = crash_database
        workspace_id, account_id = make_sandbox_workspace(database)
        # A lease far longer than the wait allowed below: the posts must not need one
        # to run out (nothing may be claimed while the queue is unreachable).
        worker = workers("worker", private_redis.url, SOCIALPUB_PUBLISH_LEASE_SECONDS=str(self.LEASE_SECONDS))
        wait_registered(private_redis.url, 1, [worker])

        due = utcnow() + dt.timedelta(seconds=2)
        schedule_posts(database, workspace_id, account_id, self.POSTS, due)
        private_redis.kill()
        assert utcnow() < due, "Redis must be gone before the posts fall due"
        # The posts fall due while the queue is unreachable.
        while utcnow() < due + dt.timedelta(seconds=4):
            assert worker.alive, f"the worker exited while Redis was down:\n{worker.output()}"
            time.sleep(0.1)
        assert published_targets(database) == 0

        private_redis.start()
        took = wait_published(database, self.POSTS, timeout=self.LEASE_SECONDS / 2, alive=[worker])
        assert worker.alive, "the same worker process carried on"
        worker.stop()

        calls = assert_each_published_exactly_once(database, self.POSTS)
        with capsys.disabled():
            print(
                f"\n[redis outage] {self.POSTS} posts fell due with Redis down; all published {took:.1f} s after "
                f"Redis came back, by the same worker; platform calls {calls['platform_calls']}, duplicates 0"
            )


class TestConcurrentDispatchers:
    def test_each_claims_at_most_its_batch_and_never_the_same_target(self, crash_database):
        import threading

        from socialpub.publishing import dispatch

        database = crash_database
        workspace_id, account_id = make_sandbox_workspace(database)
        schedule_posts(database, workspace_id, account_id, 3000, utcnow() - dt.timedelta(seconds=1))
        barrier = threading.Barrier(2)
        claimed: dict[int, list] = {}

        def dispatcher(number: int) -> None:
            with database.transaction() as session:
                barrier.wait(timeout=10)
                claimed[number] = dispatch.claim_due(session, limit=500)[0]

        threads = [threading.Thread(target=dispatcher, args=(number,)) for number in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(len(claims) for claims in claimed.values()) == [500, 500]
        first, second = ({target_id for target_id, _ in claims} for claims in claimed.values())
        assert not first & second
        with database.transaction() as session:
            statuses = dict(session.execute(select(PostTarget.status, func.count()).group_by(PostTarget.status)).all())
        assert statuses == {"publishing": 1000, "pending": 2000}
