"""RSS fetching at scale: 1,000 feeds due at once, fetched by two `socialpub worker`
processes on PostgreSQL and Redis (RQ), as in production, from a local feed server.

Run from the project root: `make bench ONLY=rss` (or `.venv/bin/python bench/rss.py`).

Measures:
  1. the first round: 1,000 feeds (10 entries each) made due together, until every
     one has been fetched (its `lastFetchedAt` set): time, items recorded, failures;
  2. the second round: the same feeds due again, the documents unchanged: time, and
     the share of requests that sent a validator and got 304 (no item touched).

Uses its own database `socialpub_bench_rss` (dropped and recreated) and Redis
database 12 (flushed). Results are printed and written to bench/rss-results.json.
Exit status 0 when the measurement ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from procs import BenchError, Processes, verdict

import api as api_bench  # the API benchmark's CLI helper

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DB_NAME = "socialpub_bench_rss"
DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_URL = "redis://127.0.0.1:6379/12"
FEEDS = 1000
ENTRIES_PER_FEED = 10
ROUND_TIMEOUT_S = 180

TARGETS = {"first_round_s": 60.0, "second_round_s": 60.0, "second_round_304_share": 0.99}

PROCESSES = Processes()


def recreate_database() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def flush_redis() -> None:
    from redis import Redis

    client = Redis.from_url(REDIS_URL, socket_connect_timeout=5)
    try:
        client.flushdb()
    finally:
        client.close()


def serve_feeds(server) -> list[str]:
    from tests.support.feed_server import rss2

    urls = []
    for number in range(FEEDS):
        entries = [
            dict(title=f"Feed {number} post {n}", link=f"https://example.com/{number}/{n}", guid=f"{number}-{n}",
                 description=f"<p>Post {n} of feed {number}</p>", pubDate=f"Mon, {n + 1:02d} Nov 2026 10:00:00 GMT")
            for n in range(ENTRIES_PER_FEED)
        ]
        urls.append(server.serve(f"/feeds/{number}.xml", rss2(f"Feed {number}", entries), etag=f'"{number}-v1"',
                                 last_modified="Mon, 23 Nov 2026 10:00:00 GMT"))
    return urls


def insert_feeds(database, workspace_id: uuid.UUID, urls: list[str]) -> None:
    from sqlalchemy import insert

    from persistence.rss import RssFeed
    from socialpub.areas import import_models

    import_models()  # every table, so foreign keys to workspaces resolve
    now = dt.datetime.now(dt.timezone.utc)
    # Not due yet: each round makes them all due at one instant.
    later = now + dt.timedelta(days=1)
    rows = [
        dict(id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, created_at=now, updated_at=now, url=url,
             title=None, title_given=False, status="active", mode="review", platforms=["twitter"],
             template="{{title}} {{link}}", fetch_interval_minutes=60, max_items_per_fetch=ENTRIES_PER_FEED,
             next_fetch_at=later, consecutive_failures=0)
        for url in urls
    ]
    with database.transaction() as session:
        session.execute(insert(RssFeed), rows)


def make_all_due(database) -> dt.datetime:
    from sqlalchemy import update

    from persistence.rss import RssFeed

    now = dt.datetime.now(dt.timezone.utc)
    with database.transaction() as session:
        session.execute(update(RssFeed).values(next_fetch_at=now))
    return now


def fetched_since(database, since: dt.datetime) -> tuple[int, int, int]:
    """(feeds fetched since `since`, feeds whose last fetch failed, items)."""
    from sqlalchemy import func, select

    from persistence.rss import RssFeed, RssItem

    with database.transaction() as session:
        fetched = session.execute(
            select(func.count()).select_from(RssFeed).where(RssFeed.last_fetched_at >= since)
        ).scalar_one()
        failed = session.execute(
            select(func.count()).select_from(RssFeed).where(RssFeed.last_error.is_not(None))
        ).scalar_one()
        items = session.execute(select(func.count()).select_from(RssItem)).scalar_one()
    return fetched, failed, items


def start_workers(env: dict, log_dir: Path) -> list[subprocess.Popen]:
    procs = []
    for n in (1, 2):
        log = open(log_dir / f"worker-{n}.log", "wb")
        procs.append(PROCESSES.spawn([str(VENV_BIN / "socialpub"), "worker"], env=env, cwd=ROOT, stdout=log,
                                     stderr=subprocess.STDOUT))
        log.close()
    from redis import Redis
    from rq import Worker

    connection = Redis.from_url(REDIS_URL)
    deadline = time.perf_counter() + 30
    while Worker.count(connection=connection) < 2:
        for proc in procs:
            if proc.poll() is not None:
                raise BenchError(f"a worker exited with {proc.returncode}")
        if time.perf_counter() > deadline:
            raise BenchError("workers did not register within 30 s")
        time.sleep(0.1)
    connection.close()
    return procs


def timed_round(database, procs) -> tuple[float, int, int]:
    since = make_all_due(database)
    started = time.perf_counter()
    while True:
        fetched, failed, items = fetched_since(database, since)
        if fetched >= FEEDS:
            return time.perf_counter() - started, failed, items
        for proc in procs:
            if proc.poll() is not None:
                raise BenchError(f"a worker exited with {proc.returncode}")
        if time.perf_counter() - started > ROUND_TIMEOUT_S:
            raise BenchError(f"only {fetched} of {FEEDS} feeds fetched after {ROUND_TIMEOUT_S} s")
        time.sleep(0.05)


def run(work_dir: Path) -> dict:
    from persistence.db import Database
    from tests.support.feed_server import FeedServer

    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL, REDIS_URL=REDIS_URL, SOCIALPUB_LOG_LEVEL="WARNING", PYTHONDONTWRITEBYTECODE="1",
        # The feed server is local: the guard lets this address through, and only it.
        SOCIALPUB_OUTBOUND_ALLOW_HOSTS="127.0.0.1",
        SOCIALPUB_RSS_DISPATCH_INTERVAL_SECONDS="1", SOCIALPUB_RSS_BATCH_SIZE="500",
    )
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    print(f"preparing database {DB_NAME} and Redis {REDIS_URL} ...", flush=True)
    recreate_database()
    flush_redis()
    api_bench.run_cli(["db", "upgrade", "--json"], env, timeout=120)
    workspace = api_bench.run_cli(["workspace", "create", "--name", "RSS bench", "--plan", "business", "--json"], env)
    database = Database(DATABASE_URL)
    server = FeedServer()
    try:
        server.__enter__()
        insert_feeds(database, uuid.UUID(workspace["id"]), serve_feeds(server))
        procs = start_workers(env, work_dir)
        results: dict = {"feeds": FEEDS, "entries_per_feed": ENTRIES_PER_FEED, "workers": 2}

        took, failed, items = timed_round(database, procs)
        first_requests = len(server.requests)
        results.update(first_round_s=took, first_round_failed=failed, first_round_items=items,
                       first_round_requests=first_requests)
        print(f"  round 1: {FEEDS} feeds fetched in {took:.2f} s, {items} items, {failed} failed, "
              f"{first_requests} requests", flush=True)

        took, failed, items_after = timed_round(database, procs)
        second = server.requests[first_requests:]
        conditional = sum(1 for request in second if "If-None-Match" in request.headers)
        # The server answers 304 exactly when If-None-Match carries the document's ETag.
        not_modified = sum(
            1 for request in second
            if request.headers.get("If-None-Match") == server.documents[request.path].etag
        )
        results.update(second_round_s=took, second_round_failed=failed, second_round_requests=len(second),
                       second_round_conditional=conditional, second_round_304=not_modified,
                       second_round_304_share=not_modified / len(second) if second else 0.0,
                       second_round_new_items=items_after - items)
        print(f"  round 2: {FEEDS} feeds fetched in {took:.2f} s, {len(second)} requests, {conditional} conditional, "
              f"{not_modified} answered 304 ({results['second_round_304_share']:.1%}), "
              f"{items_after - items} new items", flush=True)
        return results
    finally:
        server.__exit__(None, None, None)
        database.dispose()


def main() -> int:
    work_dir = Path(tempfile.mkdtemp(prefix="socialpub-bench-rss-"))
    try:
        results = run(work_dir)
    except BenchError as exc:
        print(f"bench failed: {exc}\n(logs in {work_dir})", file=sys.stderr)
        return 2
    finally:
        PROCESSES.stop_all()
    checks = [
        (f"{FEEDS} feeds due at once, all fetched", results["first_round_s"], "s", TARGETS["first_round_s"], True),
        ("second round, all fetched", results["second_round_s"], "s", TARGETS["second_round_s"], True),
        ("second round answered 304", results["second_round_304_share"], "", TARGETS["second_round_304_share"], False),
    ]
    print("\nrss feeds")
    for name, value, unit, target, below in checks:
        ok = value < target if below else value >= target
        print(f"  {name:<38} {value:8.2f} {unit:<3} target {'<' if below else '>='} {target:g} {unit}  {verdict(ok)}")
    (BENCH_DIR / "rss-results.json").write_text(json.dumps({"results": results, "targets": TARGETS}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
