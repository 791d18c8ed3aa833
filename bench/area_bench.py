"""What the area benchmarks (analytics, listening, posts, influencers, competitors,
autoreply, images, linkinbio, search) share: their own PostgreSQL database, the API's environment, a workspace
with a key, timed GETs, and the run that ends in a report and a results file."""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from procs import BenchError

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def database_url(db_name: str) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{db_name}"


def recreate_database(db_name: str, redis_url: str | None = None) -> None:
    """The bench's own database, dropped and created again (and its Redis database
    flushed, when it has one)."""
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db_name}"')
    if redis_url is not None:
        from redis import Redis

        client = Redis.from_url(redis_url, socket_connect_timeout=5)
        try:
            client.flushdb()
        finally:
            client.close()


def vacuum_analyze(url: str) -> None:
    """VACUUM ANALYZE on PostgreSQL, as autovacuum would after a bulk load."""
    import psycopg

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True, connect_timeout=5) as conn:
        conn.execute("VACUUM ANALYZE")


def api_env(url: str, **extra: str) -> dict:
    """The environment of an API measured alone: its database, rate limits out of the
    way, responses not validated, quiet logs, no Redis and the default queue."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=url,
        SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE="10000000", SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE="10000000",
        SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY="100000000", SOCIALPUB_VALIDATE_RESPONSES="false",
        SOCIALPUB_LOG_LEVEL="WARNING", PYTHONDONTWRITEBYTECODE="1", **extra,
    )
    env.pop("REDIS_URL", None)
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    return env


def upgraded_workspace(env: dict, name: str, *, timeout: float = 180) -> dict:
    """The database migrated, and a workspace on the business plan (the CLI's JSON)."""
    api_bench.run_cli(["db", "upgrade", "--json"], env, timeout=timeout)
    return api_bench.run_cli(["workspace", "create", "--name", name, "--plan", "business", "--json"], env)


def workspace_and_key(env: dict, name: str, key_name: str, *, mode: str | None = None,
                      timeout: float = 180) -> tuple[dict, dict]:
    """`upgraded_workspace` and a key of every scope (of one mode, when named) with
    limits the measurement never reaches."""
    workspace = upgraded_workspace(env, name, timeout=timeout)
    key = api_bench.run_cli(
        ["key", "create", "--workspace", workspace["id"], "--name", key_name, "--all-scopes",
         *(["--mode", mode] if mode else []), "--per-minute", "1000", "--per-day", "100000", "--json"], env,
    )
    return workspace, key


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def summary(values: list[float]) -> dict:
    return {"p50_ms": statistics.median(values), "p95_ms": p95(values), "max_ms": max(values),
            "mean_ms": statistics.fmean(values), "requests": len(values)}


def timed_get(port: int, path: str, headers: dict) -> tuple[float, bytes]:
    """One GET that must answer 200: its time in milliseconds and its body."""
    started = time.perf_counter()
    status, answer = api_bench.http_request(port, "GET", path, headers)
    took = (time.perf_counter() - started) * 1000
    if status != 200:
        raise BenchError(f"GET {path} answered {status}: {answer[:500]!r}")
    return took, answer


def bench_main(name: str, run: Callable[[Path], dict], report: Callable[[dict], object], targets: dict, *,
               clean_up: bool = False, json_default: Callable[[object], object] | None = None) -> int:
    """Runs `run(work_dir)`, stops every process it started, prints `report(results)`
    and writes bench/<name>-results.json: 0, or 2 when the run failed (its logs kept).
    `clean_up`: the work directory is removed after a run that did not fail.
    `json_default`: how the results file writes values JSON has no type for."""
    work_dir = Path(tempfile.mkdtemp(prefix=f"socialpub-bench-{name}-"))
    try:
        results = run(work_dir)
    except BenchError as exc:
        print(f"bench failed: {exc}\n(logs in {work_dir})", file=sys.stderr)
        return 2
    finally:
        api_bench.PROCESSES.stop_all()
    report(results)
    document = json.dumps({"results": results, "targets": targets}, indent=2, default=json_default)
    (BENCH_DIR / f"{name}-results.json").write_text(document + "\n")
    if clean_up:
        import shutil

        shutil.rmtree(work_dir, ignore_errors=True)
    return 0
