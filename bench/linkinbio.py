"""The public link-in-bio page under load, and its view counting kept off the
database's path.

Run from the project root: `make bench ONLY=linkinbio` (or `.venv/bin/python bench/linkinbio.py`).

The API runs as in production: gunicorn with two of socialpub's uvicorn workers, on
PostgreSQL (its own database `socialpub_bench_linkinbio`, dropped and recreated) and
Redis (database 12, flushed). A published page of ten blocks (links, a header, a
text, an email) with an avatar is requested at `/p/<slug>` by 50 visitors (each its
own user agent) over keep-alive connections, from bench/api.py's asyncio generator
(wrk's script sends no header of a visitor's own). All traffic stays on the
loopback interface.

Measures:
  1. the page at 32 connections: requests/s, p50 and p99 (target: >= 1,000 requests/s
     on two workers), and the database transactions the server ran meanwhile per
     request (pg_stat_database; the page is rendered once per worker and then only
     checked for a change once a second, views are recorded in memory);
  2. the views recorded: after the load the flush (socialpub.linkinbio.flushing) is
     run once, as the periodic job runs it; every request counted must have reached
     Redis (shipped each second by each worker) and been flushed, and the flush's
     own speed (events a second) is reported.

Results are printed and written to bench/linkinbio-results.json. Exit status 0 when
the measurement ran (targets met or not), 2 when a server failed or answered wrongly.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import os
import secrets
import sys
import time
import uuid
from pathlib import Path

from area_bench import PG_ADMIN_URL, bench_main, database_url, recreate_database, upgraded_workspace
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server, load and CPU helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_linkinbio"
DATABASE_URL = database_url(DB_NAME)
REDIS_URL = "redis://127.0.0.1:6379/12"
TARGETS = {"page_rps": 1000.0, "db_transactions_per_request": 0.05}
VISITORS = 50
LOAD_SECONDS, WARMUP_SECONDS, CONNECTIONS = 10.0, 2.0, 32


def transactions() -> int:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return conn.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                            (DB_NAME,)).fetchone()[0]


def prepare(env: dict) -> dict:
    workspace = upgraded_workspace(env, "Link bench", timeout=120)
    from PIL import Image

    from persistence.db import Database
    from persistence.uploads import Upload, UploadStatus
    from socialpub.areas import import_models
    from socialpub.config import Settings
    from socialpub.linkinbio import service
    from socialpub.tenancy import Actor, TenantScope
    from socialpub.uploads.storage import original_name, storage_for

    import_models()
    settings = Settings.from_env()
    database = Database(env["DATABASE_URL"])
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (400, 400), (200, 120, 40)).save(buffer, "PNG")
    now = dt.datetime.now(dt.timezone.utc)
    with database.transaction() as session:
        upload = Upload(id=uuid.uuid4(), workspace_id=uuid.UUID(workspace["id"]), livemode=True, filename="me.png",
                        content_type="image/png", size=len(buffer.getvalue()), status=UploadStatus.READY,
                        upload_expires_at=now, completed_at=now)
        session.add(upload)
        storage_for(settings).write(original_name(upload.id), buffer.getvalue(), "image/png")
        session.commit()
        scope = TenantScope.workspace(session, workspace["id"], True, actor=Actor.operator("bench"))
        page = service.add_page(scope, settings, livemode=True, slug="bench-page", title="Ana Ruiz",
                                bio="Recipes from my kitchen in Seville.", avatar_upload_key=upload.id,
                                theme={"preset": "dark", "accent_color": "#e85d04"})
        blocks = [dict(block_type="header", title="Find me")]
        blocks += [dict(block_type="link", title=f"Link {n}", url=f"https://example.com/{n}") for n in range(7)]
        blocks += [dict(block_type="text", text="New recipes every Friday."),
                   dict(block_type="email", email="ana@example.com")]
        for block in blocks:
            service.insert_block(scope, settings, page.id, **block)
        service.set_published(scope, page.id, published=True)
        slug = page.slug
    database.dispose()
    return {"settings": settings, "slug": slug}


def load(port: int, pid: int, path: str, visitors: list[str]) -> dict:
    warmup = 0
    for seconds, measured in ((WARMUP_SECONDS, False), (LOAD_SECONDS, True)):
        before = transactions()
        with api_bench.CpuMeter(pid) as meter:
            row = asyncio.run(api_bench._async_load(port, "GET", path, None, visitors, seconds, CONNECTIONS))
        row.update(meter.report(row["requests"]))
        if not measured:
            warmup = row["requests"]
    row["warmup_requests"] = warmup
    time.sleep(1.0)  # statistics reach pg_stat_database within a second
    row["db_transactions"] = transactions() - before
    row["db_transactions_per_request"] = row["db_transactions"] / max(1, row["requests"])
    if set(row["statuses"]) != {"200"}:
        raise BenchError(f"the page answered {row['statuses']}")
    return row


def run(work_dir: Path) -> dict:
    port = free_port()
    recreate_database(DB_NAME, REDIS_URL)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL, REDIS_URL=REDIS_URL, SOCIALPUB_SECRET_KEY=secrets.token_urlsafe(32),
        SOCIALPUB_UPLOADS_DIR=str(work_dir / "uploads"), SOCIALPUB_IMAGE_CACHE_DIR=str(work_dir / "image-cache"),
        SOCIALPUB_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}", SOCIALPUB_LOG_LEVEL="WARNING",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    os.environ.update({name: env[name] for name in env if name.startswith("SOCIALPUB_") or name in ("DATABASE_URL", "REDIS_URL")})
    print("making the page ...", flush=True)
    prepared = prepare(env)
    proc, cold, _log = api_bench.start_gunicorn("linkinbio", "socialpub.app:create_app()", port, env, work_dir)
    path = f"/p/{prepared['slug']}"
    status, body = api_bench.http_request(port, "GET", path, headers={"User-Agent": "Mozilla/5.0 Firefox/120.0"})
    if status != 200 or b"Link 6" not in body:
        raise BenchError(f"GET {path} answered {status}: {body[:300]!r}")
    # One header line a visitor: the load generator sends it after the request line
    # (as the value of its key header, which the page ignores), so each of the 50
    # visitors has a user agent of its own and is counted.
    visitors = [f"bench\r\nUser-Agent: Mozilla/5.0 (bench visitor {n}) Firefox/120.0" for n in range(VISITORS)]
    results: dict = {"cold_start_s": cold, "machine_busy_before_pct": round(api_bench.background_load(), 1),
                     "loader": "asyncio", "page_bytes": len(body)}
    print("the page under load ...", flush=True)
    results["page"] = load(port, proc.pid, path, visitors)
    time.sleep(2.5)  # each worker ships its recorded views to Redis every second
    from persistence.db import Database
    from socialpub.linkinbio import flushing

    database = Database(DATABASE_URL)
    started = time.perf_counter()
    flushed = flushing.flush(database=database, settings=prepared["settings"])
    took = time.perf_counter() - started
    database.dispose()
    served = results["page"]["requests"] + results["page"]["warmup_requests"] + 1
    results["flush"] = {"events": flushed, "seconds": round(took, 3), "events_per_s": flushed / took if took else 0.0}
    results["served_before_flush"] = served
    return results


def print_report(results: dict) -> list:
    page, flush = results["page"], results["flush"]
    print(f"\nlinkinbio (gunicorn, 2 workers, PostgreSQL + Redis; machine {results['machine_busy_before_pct']}% busy "
          f"before the load; load from {results['loader']}; page of {results['page_bytes']:,} bytes)")
    print(f"  {'GET /p/<slug>, ' + str(CONNECTIONS) + ' connections, ' + str(VISITORS) + ' visitors':<52} "
          f"{page['rps']:8.0f} req/s   p50 {page['p50_ms']:6.2f} ms   p99 {page['p99_ms']:6.2f} ms   "
          f"CPU {page['worker_cpu_ms_per_request']:.2f} ms/request")
    print(f"  {'database transactions during the load':<52} {page['db_transactions']:8d}   "
          f"({page['db_transactions_per_request']:.4f} per request)")
    print(f"  {'flush after the load (warm-up and load counted)':<52} {flush['events']:8d} events in "
          f"{flush['seconds']:.2f} s ({flush['events_per_s']:,.0f} events/s) for {results['served_before_flush']:,} "
          "pages served")
    checks = [
        (f"page requests/s ({CONNECTIONS} connections)", page["rps"], "/s", TARGETS["page_rps"], False),
        ("database transactions per page request", page["db_transactions_per_request"], "", TARGETS[
            "db_transactions_per_request"], True),
        ("views flushed per page served", flush["events"] / max(1, results["served_before_flush"]), "", 1.0, False),
    ]
    print()
    for name, value, unit, target, below in checks:
        ok = value < target if below else value >= target
        print(f"  {name:<42} {value:9.4g} {unit:<3} target {'<' if below else '>='} {target:g} {unit}  {verdict(ok)}")
    return checks


def main() -> int:
    return bench_main("linkinbio", run, print_report, TARGETS, clean_up=True)


if __name__ == "__main__":
    sys.exit(main())
