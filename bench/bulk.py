"""Bulk operations end to end: the API under gunicorn (2 uvicorn workers) and two
`socialpub worker` processes, on PostgreSQL and Redis (RQ), as in production.

Run from the project root: `make bench` (or `.venv/bin/python bench/bulk.py`).

Measures, each from the moment `POST /bulk` is sent:
  - bulk schedule of 500 drafts, until the operation reads `completed`;
  - bulk delete of those 500 posts, likewise;
  - bulk publish of 500 drafts (sandbox accounts), until every post is `published`;
  - `POST /bulk` latency over 200 requests of 500 posts each (4 at a time).

Uses its own database `socialpub_bench_bulk` (dropped and recreated) and Redis
database 13 (flushed). Results are printed and written to bench/bulk-results.json.
Exit status 0 when the measurement ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from procs import BenchError, Processes, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DB_NAME = "socialpub_bench_bulk"
DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_URL = "redis://127.0.0.1:6379/13"
POSTS = 500
LATENCY_REQUESTS = 200
LATENCY_CONCURRENCY = 4

TARGETS = {"schedule_s": 1.0, "delete_s": 1.0, "publish_s": 3.0, "post_bulk_p99_ms": 200.0}

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


def insert_drafts(database, workspace_id: uuid.UUID, count: int, label: str) -> list[str]:
    from sqlalchemy import insert

    from persistence.posts import Post

    from socialpub.areas import import_models


    import_models()  # every table, so foreign keys to workspaces resolve

    now = dt.datetime.now(dt.timezone.utc)
    rows = [
        dict(id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, created_at=now, updated_at=now,
             content=f"{label} {n}", platforms=["twitter"], status="draft")
        for n in range(count)
    ]
    with database.transaction() as session:
        session.execute(insert(Post), rows)
    return [str(row["id"]) for row in rows]


def published_count(database, post_ids: list[str]) -> int:
    from sqlalchemy import func, select

    from persistence.posts import Post

    from socialpub.areas import import_models


    import_models()  # every table, so foreign keys to workspaces resolve

    with database.transaction() as session:
        return session.execute(
            select(func.count()).select_from(Post).where(
                Post.id.in_([uuid.UUID(p) for p in post_ids]), Post.status == "published"
            )
        ).scalar_one()


class Api:
    def __init__(self, port: int, key: str):
        self.port = port
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        status, raw = api_bench.http_request(
            self.port, method, f"/api/v1{path}", self.headers, json.dumps(body).encode() if body is not None else None,
            timeout=30,
        )
        return status, json.loads(raw) if raw else {}

    def start(self, body: dict) -> str:
        status, answer = self.call("POST", "/bulk", body)
        if status != 202:
            raise BenchError(f"POST /bulk answered {status}: {answer}")
        return answer["data"]["id"]

    def wait_finished(self, operation_id: str, timeout: float = 60) -> dict:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            status, answer = self.call("GET", f"/bulk/{operation_id}")
            if status != 200:
                raise BenchError(f"GET /bulk/{operation_id} answered {status}: {answer}")
            if answer["data"]["status"] in ("completed", "cancelled", "failed"):
                return answer["data"]
            time.sleep(0.01)
        raise BenchError(f"bulk operation {operation_id} did not finish within {timeout} s")


def timed_operation(api: Api, body: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    operation = api.wait_finished(api.start(body))
    return time.perf_counter() - started, operation


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


def post_bulk_latencies(api: Api) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    per_thread = LATENCY_REQUESTS // LATENCY_CONCURRENCY

    def client():
        for _ in range(per_thread):
            body = {"action": "archive", "postIds": [str(uuid.uuid4()) for _ in range(POSTS)]}
            started = time.perf_counter()
            status, answer = api.call("POST", "/bulk", body)
            took = time.perf_counter() - started
            if status != 202:
                raise BenchError(f"POST /bulk answered {status}: {answer}")
            with lock:
                latencies.append(took * 1000)

    threads = [threading.Thread(target=client) for _ in range(LATENCY_CONCURRENCY)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def run(work_dir: Path) -> dict:
    from persistence.db import Database

    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL, REDIS_URL=REDIS_URL,
        SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE="10000000", SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE="10000000",
        SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY="100000000", SOCIALPUB_VALIDATE_RESPONSES="false",
        SOCIALPUB_LOG_LEVEL="WARNING", PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    print(f"preparing database {DB_NAME} and Redis {REDIS_URL} ...", flush=True)
    recreate_database()
    flush_redis()
    api_bench.run_cli(["db", "upgrade", "--json"], env, timeout=120)
    workspace = api_bench.run_cli(["workspace", "create", "--name", "Bulk bench", "--plan", "business", "--json"], env)
    key = api_bench.run_cli(
        ["key", "create", "--workspace", workspace["id"], "--name", "bulk bench", "--all-scopes",
         "--per-minute", "1000", "--per-day", "100000", "--json"], env,
    )
    workspace_id = uuid.UUID(workspace["id"])
    database = Database(DATABASE_URL)
    try:
        port = free_port()
        api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
        start_workers(env, work_dir)
        api = Api(port, key["key"])
        results: dict = {}

        drafts = insert_drafts(database, workspace_id, POSTS, "Bulk schedule")
        when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat()
        took, operation = timed_operation(api, {"action": "schedule", "postIds": drafts, "scheduledAt": when})
        results["schedule_s"] = took
        results["schedule_succeeded"] = operation["succeeded"]
        print(f"  schedule {POSTS}: {took:.2f} s ({operation['succeeded']} succeeded)", flush=True)

        took, operation = timed_operation(api, {"action": "delete", "postIds": drafts})
        results["delete_s"] = took
        results["delete_succeeded"] = operation["succeeded"]
        print(f"  delete {POSTS}: {took:.2f} s ({operation['succeeded']} succeeded)", flush=True)

        to_publish = insert_drafts(database, workspace_id, POSTS, "Bulk publish")
        started = time.perf_counter()
        operation = api.wait_finished(api.start({"action": "publish", "postIds": to_publish}))
        handed = time.perf_counter() - started
        deadline = started + 120
        while (done := published_count(database, to_publish)) < POSTS:
            if time.perf_counter() > deadline:
                raise BenchError(f"only {done} of {POSTS} posts published after 120 s")
            time.sleep(0.02)
        results["publish_s"] = time.perf_counter() - started
        results["publish_handed_to_pipeline_s"] = handed
        print(f"  publish {POSTS}: all published {results['publish_s']:.2f} s after the request "
              f"(operation completed after {handed:.2f} s)", flush=True)

        latencies = sorted(post_bulk_latencies(api))
        results["post_bulk_p50_ms"] = statistics.median(latencies)
        results["post_bulk_p99_ms"] = latencies[max(0, int(len(latencies) * 0.99) - 1)]
        results["post_bulk_requests"] = len(latencies)
        print(f"  POST /bulk ({POSTS} posts each, {LATENCY_CONCURRENCY} at a time): "
              f"p50 {results['post_bulk_p50_ms']:.0f} ms, p99 {results['post_bulk_p99_ms']:.0f} ms", flush=True)
        return results
    finally:
        database.dispose()


def main() -> int:
    work_dir = Path(tempfile.mkdtemp(prefix="socialpub-bench-bulk-"))
    try:
        results = run(work_dir)
    except BenchError as exc:
        print(f"bench failed: {exc}\n(logs in {work_dir})", file=sys.stderr)
        return 2
    finally:
        PROCESSES.stop_all()
        api_bench.PROCESSES.stop_all()
    checks = [
        ("bulk schedule of 500", results["schedule_s"], "s", TARGETS["schedule_s"]),
        ("bulk delete of 500", results["delete_s"], "s", TARGETS["delete_s"]),
        ("bulk publish of 500, all published", results["publish_s"], "s", TARGETS["publish_s"]),
        ("POST /bulk p99", results["post_bulk_p99_ms"], "ms", TARGETS["post_bulk_p99_ms"]),
    ]
    print("\nbulk operations")
    for name, value, unit, target in checks:
        print(f"  {name:<38} {value:8.2f} {unit:<3} target < {target:g} {unit}  {verdict(value < target)}")
    (BENCH_DIR / "bulk-results.json").write_text(json.dumps({"results": results, "targets": TARGETS}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
