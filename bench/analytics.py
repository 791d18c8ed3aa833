"""Analytics at scale: a workspace with 50,000 published targets and 90 days of
snapshots, on PostgreSQL, the API under gunicorn (2 uvicorn workers) as in production.

Run from the project root: `make bench ONLY=analytics` (or `.venv/bin/python bench/analytics.py`).

Measures:
  - GET /analytics/overview latency (p50, p95) over 200 requests, for 30d and 90d;
  - GET /analytics/top-posts latency (p50, p95) over 200 requests (90d, by engagements);
  - the snapshot job with all 50,000 targets due at once, on one worker: enrol and
    claim (the periodic dispatcher), then every slice job in turn in one process,
    against the job's interval (SOCIALPUB_ANALYTICS_SNAPSHOT_INTERVAL_SECONDS).

Uses its own database `socialpub_bench_analytics` (dropped and recreated; with
ANALYTICS_BENCH_REUSE=1, one seeded by an earlier run is measured again as it is). Results are
printed and written to bench/analytics-results.json. Exit status 0 when the
measurement ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import datetime as dt
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from area_bench import api_env, bench_main, database_url, p95, recreate_database, upgraded_workspace
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_analytics"
DATABASE_URL = database_url(DB_NAME)
TARGETS_COUNT = 50_000
DAYS = 90
REQUESTS = 200
INSERT_BATCH = 5000

TARGETS = {"overview_30d_p95_ms": 100.0, "overview_90d_p95_ms": 100.0, "top_posts_p95_ms": 100.0}


def seed(database, workspace_id: uuid.UUID, now: dt.datetime) -> dict:
    """50,000 posts published over the last 90 days to the workspace's sandbox
    accounts (test mode), each tracked with a measured reading, its snapshots (hourly
    for 48 hours, then daily) and the accounts' daily followers."""
    from sqlalchemy import insert, select, text

    from persistence.accounts import ConnectedAccount
    from persistence.analytics import FollowerSnapshot, TrackedAccount, TrackedPost
    from persistence.posts import Post, PostTarget
    from socialpub.analytics import rollups
    from socialpub.analytics.recording import latest_values
    from socialpub.areas import import_models
    from socialpub.connectors.base import PostMetricsReading
    from socialpub.connectors.sandbox import sandbox_followers

    import_models()
    rng = random.Random(42)
    started = time.perf_counter()
    with database.transaction() as session:
        accounts = session.execute(
            select(ConnectedAccount.id, ConnectedAccount.platform).where(
                ConnectedAccount.workspace_id == workspace_id, ConnectedAccount.livemode.is_(False)
            )
        ).all()
    if not accounts:
        raise BenchError("the workspace has no sandbox accounts")
    span = dt.timedelta(days=DAYS).total_seconds()
    for start in range(0, TARGETS_COUNT, INSERT_BATCH):
        posts, targets, tracked = [], [], []
        for n in range(start, min(start + INSERT_BATCH, TARGETS_COUNT)):
            account_id, platform = accounts[n % len(accounts)]
            published = now - dt.timedelta(seconds=span * (n + 0.5) / TARGETS_COUNT)
            post_id, target_id = uuid.uuid4(), uuid.uuid4()
            content = f"Bench post {n} " + "x" * rng.randint(10, 200)
            posts.append(dict(id=post_id, workspace_id=workspace_id, livemode=False, content=content,
                              platforms=[platform], status="published", published_at=published,
                              created_at=published, updated_at=published))
            targets.append(dict(id=target_id, workspace_id=workspace_id, livemode=False, post_id=post_id,
                                account_id=account_id, platform=platform, status="published", attempts=1,
                                external_id=f"sbx_bench{n:011d}", published_at=published, comment_attempts=0,
                                created_at=published, updated_at=published))
            impressions = rng.randint(100, 20_000)
            likes = int(impressions * rng.uniform(0.01, 0.06))
            reading = PostMetricsReading(
                impressions=impressions, reach=int(impressions * 0.7), clicks=int(impressions * 0.01), likes=likes,
                comments=likes // 8, shares=likes // 5,
            )
            tracked.append(dict(
                id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, target_id=target_id, post_id=post_id,
                account_id=account_id, platform=platform, published_at=published, published_day=published.date(),
                content_length=len(content), captured_at=now - dt.timedelta(minutes=30),
                next_due_at=now + dt.timedelta(hours=1), created_at=published, updated_at=now,
                **latest_values(reading, followers_at_post=sandbox_followers(account_id, published)),
            ))
        with database.transaction() as session:
            session.execute(insert(Post), posts)
            session.execute(insert(PostTarget), targets)
            session.execute(insert(TrackedPost), tracked)
    print(f"  {TARGETS_COUNT} published targets tracked: {time.perf_counter() - started:.1f} s", flush=True)

    started = time.perf_counter()
    with database.transaction() as session:
        # Every bucket a target went through: hourly for 48 hours, then daily, until now.
        session.execute(text("""
            INSERT INTO analytics_post_snapshots (id, workspace_id, livemode, target_id, bucket_start, captured_at,
                impressions, reach, clicks, likes, comments, shares, created_at, updated_at)
            SELECT gen_random_uuid(), t.workspace_id, t.livemode, t.target_id, b.bucket, b.bucket,
                t.impressions, t.reach, t.clicks, t.likes, t.comments, t.shares, b.bucket, b.bucket
            FROM analytics_posts t
            CROSS JOIN LATERAL (
                SELECT generate_series(date_trunc('hour', t.published_at),
                                       LEAST(t.published_at + interval '48 hours', :now), interval '1 hour') AS bucket
                UNION ALL
                SELECT generate_series(date_trunc('day', t.published_at + interval '48 hours') + interval '1 day',
                                       :now, interval '1 day')
            ) b
        """), {"now": now})
        snapshots = session.execute(text("SELECT count(*) FROM analytics_post_snapshots")).scalar_one()
        # The daily rollups, as the snapshot job leaves them.
        days = {(now - dt.timedelta(days=day)).date() for day in range(DAYS + 1)}
        rollups.refresh_days(session, {(workspace_id, False, day) for day in days})
        followers, tracked_accounts = [], []
        for account_id, platform in accounts:
            for day in range(2 * DAYS + 2):
                bucket = (now - dt.timedelta(days=day)).replace(hour=0, minute=0, second=0, microsecond=0)
                followers.append(dict(
                    id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, account_id=account_id, platform=platform,
                    bucket_start=bucket, captured_at=bucket, followers=sandbox_followers(account_id, bucket),
                    created_at=bucket, updated_at=bucket,
                ))
            tracked_accounts.append(dict(
                id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, account_id=account_id, platform=platform,
                followers=sandbox_followers(account_id, now), captured_at=now, next_due_at=now + dt.timedelta(days=1),
                created_at=now, updated_at=now,
            ))
        session.execute(insert(FollowerSnapshot), followers)
        session.execute(insert(TrackedAccount), tracked_accounts)
    with database.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
    print(f"  {snapshots} post snapshots, {len(followers)} follower snapshots: "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    return {"accounts": len(accounts), "post_snapshots": snapshots, "follower_snapshots": len(followers)}


def seeded_workspace() -> str | None:
    """The bench workspace of a database seeded by an earlier run, if there is one."""
    import psycopg

    try:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}", connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT workspace_id FROM analytics_posts GROUP BY workspace_id HAVING count(*) >= %s",
                (TARGETS_COUNT,),
            ).fetchone()
    except psycopg.Error:
        return None
    return str(row[0]) if row else None


def seeded_counts(database) -> dict:
    from sqlalchemy import text

    with database.transaction() as session:
        return {
            "accounts": session.execute(text("SELECT count(*) FROM analytics_accounts")).scalar_one(),
            "post_snapshots": session.execute(text("SELECT count(*) FROM analytics_post_snapshots")).scalar_one(),
            "follower_snapshots": session.execute(text("SELECT count(*) FROM analytics_follower_snapshots")).scalar_one(),
        }


def latencies(port: int, key: str, path: str) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(10):  # warm both workers' caches and connections
        api_bench.http_request(port, "GET", path, headers=headers, timeout=30)
    took = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        status, body = api_bench.http_request(port, "GET", path, headers=headers, timeout=30)
        took.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise BenchError(f"GET {path} answered {status}: {body[:500]!r}")
    return sorted(took)


class _CollectedQueue:
    """What the dispatcher hands to the queue, kept for one worker to run in turn."""

    def __init__(self):
        self.jobs: list = []

    def enqueue(self, function, *args, job_id=None, **kwargs):
        self.jobs.append((function, args, kwargs))


def snapshot_job(database, settings) -> dict:
    """Every tracked target due now, then one dispatch and its jobs on one worker."""
    from sqlalchemy import text

    from socialpub.analytics import dispatch, jobs
    from workers import context

    with database.transaction() as session:
        session.execute(text("UPDATE analytics_posts SET next_due_at = now() - interval '1 minute'"))
        session.execute(text("UPDATE analytics_accounts SET next_due_at = now() - interval '1 minute'"))
    queue = _CollectedQueue()
    context.install(database, queue=queue, settings=settings)
    started = time.perf_counter()
    handed = dispatch.dispatch(database=database, queue=queue, settings=settings,
                               post_job=jobs.collect_post_metrics, account_job=jobs.collect_account_metrics)
    dispatched = time.perf_counter() - started
    measured = 0
    for function, args, kwargs in queue.jobs:
        measured += function(*args, **kwargs)["measured"]
    took = time.perf_counter() - started
    print(f"  snapshot job: {handed} claimed in {dispatched:.1f} s, {measured} measured in {len(queue.jobs)} jobs, "
          f"{took:.1f} s in all", flush=True)
    return {"snapshot_job_s": took, "snapshot_dispatch_s": dispatched, "snapshot_measured": measured,
            "snapshot_jobs": len(queue.jobs)}


def run(work_dir: Path) -> dict:
    from persistence.db import Database
    from socialpub.config import Settings

    env = api_env(DATABASE_URL)
    env["SOCIALPUB_QUEUE_BACKEND"] = "inline"
    reuse = os.environ.get("ANALYTICS_BENCH_REUSE") == "1" and seeded_workspace() is not None
    if reuse:
        print(f"reusing the seeded database {DB_NAME} (ANALYTICS_BENCH_REUSE=1)", flush=True)
        workspace = {"id": seeded_workspace()}
    else:
        print(f"preparing database {DB_NAME} ...", flush=True)
        recreate_database(DB_NAME)
        workspace = upgraded_workspace(env, "Analytics bench", timeout=120)
    key = api_bench.run_cli(
        ["key", "create", "--workspace", workspace["id"], "--name", "analytics bench", "--all-scopes",
         "--per-minute", "1000", "--per-day", "100000", "--json"], env,
    )["key"]
    database = Database(DATABASE_URL)
    settings = Settings.from_env(database_url=DATABASE_URL)
    try:
        now = dt.datetime.now(dt.timezone.utc)
        if reuse:
            results: dict = seeded_counts(database)
        else:
            results = seed(database, uuid.UUID(workspace["id"]), now)
        port = free_port()
        api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
        for name, path in (
            ("overview_30d", "/api/v1/analytics/overview?period=30d"),
            ("overview_90d", "/api/v1/analytics/overview?period=90d"),
            ("top_posts", "/api/v1/analytics/top-posts?period=90d&metric=engagements&limit=100"),
            ("posts_page", "/api/v1/analytics/posts?sort=-engagementRate&limit=100"),
        ):
            took = latencies(port, key, path)
            results[f"{name}_p50_ms"], results[f"{name}_p95_ms"] = statistics.median(took), p95(took)
            print(f"  GET {path}: p50 {results[f'{name}_p50_ms']:.1f} ms, p95 {results[f'{name}_p95_ms']:.1f} ms",
                  flush=True)
        api_bench.PROCESSES.stop_all()
        results.update(snapshot_job(database, settings))
        results["snapshot_interval_s"] = settings.analytics_snapshot_interval_seconds
        return results
    finally:
        database.dispose()


def report(results: dict) -> None:
    interval = results["snapshot_interval_s"]
    checks = [
        ("GET /analytics/overview 30d p95", results["overview_30d_p95_ms"], "ms", TARGETS["overview_30d_p95_ms"]),
        ("GET /analytics/overview 90d p95", results["overview_90d_p95_ms"], "ms", TARGETS["overview_90d_p95_ms"]),
        ("GET /analytics/top-posts p95", results["top_posts_p95_ms"], "ms", TARGETS["top_posts_p95_ms"]),
        (f"snapshot job, {TARGETS_COUNT} targets, 1 worker", results["snapshot_job_s"], "s", interval),
    ]
    print(f"\nanalytics ({TARGETS_COUNT} targets, {results['post_snapshots']} snapshots)")
    for name, value, unit, target in checks:
        print(f"  {name:<44} {value:9.2f} {unit:<3} target < {target:g} {unit}  {verdict(value < target)}")


def main() -> int:
    return bench_main("analytics", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
