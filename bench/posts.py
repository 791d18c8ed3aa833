"""The posts list as data grows: 1,000,000 posts in one workspace (and 100 other
workspaces of 1,000 posts each) on PostgreSQL, the API under gunicorn (2 uvicorn
workers) as in production.

Run from the project root: `make bench ONLY=posts` (or `.venv/bin/python bench/posts.py`).

Measures `GET /posts` one request at a time, after warm-up requests, for the first
page (`limit=20`), a status's first page (`status=published`, `status=draft`) and
deep pages (`offset=10000`, with and without a status), against two servers side by
side, requests alternating between them:
  counters: the API as it is (totalItems from the post counters, migration 0027);
  counted:  the same API with totalItems counted row by row, as the list did before
            the counters (bench/posts_counted_app.py): the baseline.
Every answer is checked (a full page, the same totalItems from both servers, equal to
a COUNT of the rows). EXPLAIN ANALYZE of the deep pages' queries is printed (which
index serves the list's order).

Then what the counters cost writers: 16 connections at once each settling posts of
the big workspace (scheduled -> published, one post a transaction, as publishing
does at the top of the hour), with the counters' trigger and without it; the
counters are then compared with a COUNT of the posts.

The posts are made by INSERT ... SELECT generate_series with the counters' trigger
off, the counters then made from the posts (as migration 0027 backfills them), then
VACUUM ANALYZE. Uses its own database (`socialpub_bench_posts`, dropped and
recreated). Results are printed and written to bench/posts-results.json. Exit status
0 when the measurement ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from area_bench import api_env, database_url, recreate_database, summary, upgraded_workspace
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_posts"
PG_URL = database_url(DB_NAME)
PSYCOPG_URL = f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}"
POSTS = 1_000_000
OTHER_WORKSPACES = 100
OTHER_POSTS = 1_000  # each
WARMUP = 10
REQUESTS = 150  # per kind and server
KEYS = 6  # a key allows 1,000 requests a minute: the requests go round these
WRITERS = 16
WRITES = 150  # transactions per writer and variant
KINDS = {
    "first page": "limit=20",
    "published": "limit=20&status=published",
    "drafts": "limit=20&status=draft",
    "offset 10000": "limit=20&offset=10000",
    "offset 10000 published": "limit=20&offset=10000&status=published",
}
TARGET_P95_MS = 20.0

# The big workspace's posts, one a second back from now: of every 20, 6 drafts, 2
# scheduled (later), 10 published, 2 failed; every 50th non-scheduled post archived.
_STATUS = "(ARRAY['draft','draft','draft','draft','draft','draft','scheduled','scheduled','published','published'," \
          "'published','published','published','published','published','published','published','published'," \
          "'failed','failed'])[g %% 20 + 1]"
_INSERT = f"""
INSERT INTO posts (id, workspace_id, livemode, created_at, updated_at, content, platforms, status,
                   scheduled_at, published_at, archived_at)
SELECT gen_random_uuid(), %(workspace)s, false, now() - g * interval '1 second', now() - g * interval '1 second',
       'Bench post ' || g || ': our autumn collection is live.', '["twitter"]', {_STATUS},
       CASE WHEN {_STATUS} = 'scheduled' THEN now() + interval '30 days' END,
       CASE WHEN {_STATUS} = 'published' THEN now() - g * interval '1 second' END,
       CASE WHEN g %% 50 = 7 AND {_STATUS} <> 'scheduled' THEN now() END
FROM generate_series(%(first)s::integer, %(last)s::integer) AS g
"""
_RECOUNT = """
INSERT INTO post_counters (workspace_id, livemode, status, archived, slot, count)
SELECT workspace_id, livemode, status, archived_at IS NOT NULL, 0, count(*) FROM posts
GROUP BY workspace_id, livemode, status, archived_at IS NOT NULL
"""


def load(workspace_id: str) -> dict:
    import psycopg

    timings = {}
    with psycopg.connect(PSYCOPG_URL, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("ALTER TABLE posts DISABLE TRIGGER posts_counted")
        others = [row[0] for row in conn.execute(
            "INSERT INTO workspaces (id, name, plan, created_at, updated_at) "
            "SELECT gen_random_uuid(), 'Other ' || g, 'business', now(), now() FROM generate_series(1, %s) AS g "
            "RETURNING id", (OTHER_WORKSPACES,))]
        for other in others:
            conn.execute(_INSERT, {"workspace": other, "first": 1, "last": OTHER_POSTS})
        for first in range(1, POSTS + 1, 200_000):
            conn.execute(_INSERT, {"workspace": workspace_id, "first": first, "last": min(POSTS, first + 199_999)})
            print(f"  {min(POSTS, first + 199_999):,} posts", flush=True)
        conn.execute("DELETE FROM post_counters")
        conn.execute(_RECOUNT)
        conn.execute("ALTER TABLE posts ENABLE TRIGGER posts_counted")
        timings["load_s"] = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE posts")
        conn.execute("VACUUM ANALYZE post_counters")
        timings["vacuum_analyze_s"] = time.perf_counter() - started
    return timings


def exact_totals(workspace_id: str) -> dict[str, int]:
    """totalItems each kind must answer, counted row by row."""
    import psycopg

    totals = {}
    with psycopg.connect(PSYCOPG_URL) as conn:
        for kind, query in KINDS.items():
            status = dict(part.split("=") for part in query.split("&")).get("status")
            sql = "SELECT count(*) FROM posts WHERE workspace_id = %s AND NOT livemode AND archived_at IS NULL"
            totals[kind] = conn.execute(sql + (" AND status = %s" if status else ""),
                                        (workspace_id, status) if status else (workspace_id,)).fetchone()[0]
    return totals


def explain(workspace_id: str) -> dict[str, list[str]]:
    """The plans of the deep pages' queries: as the list asks them (the page's ids
    from an index, then its 20 posts; the total from the counters), and a plain
    OFFSET over the posts, as the list read a page before."""
    import psycopg

    where = "workspace_id = %(w)s AND NOT livemode AND archived_at IS NULL{status}"
    order = "ORDER BY created_at DESC, id DESC"
    plain = f"SELECT * FROM posts WHERE {where} {order} LIMIT 20 OFFSET 10000"
    keyed = (f"SELECT * FROM posts WHERE {where} AND id IN (SELECT id FROM posts WHERE {where} {order} "
             f"LIMIT 20 OFFSET 10000) {order}")
    total = ("SELECT coalesce(sum(count), 0) FROM post_counters WHERE workspace_id = %(w)s AND NOT livemode "
             "AND NOT archived{status}")
    counted = f"SELECT count(*) FROM posts WHERE {where}"
    plans = {}
    with psycopg.connect(PSYCOPG_URL) as conn:
        for name, sql in (("page offset 10000 (ids first)", keyed), ("page offset 10000 published (ids first)", keyed),
                          ("page offset 10000 published (plain OFFSET, before)", plain),
                          ("total published (counters)", total), ("total published (COUNT, before)", counted)):
            status = " AND status = 'published'" if "published" in name else ""
            rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql.format(status=status), {"w": workspace_id})
            plans[name] = [row[0] for row in rows]
    return plans


def measure_lists(ports: dict[str, int], keys: list[str], expected: dict[str, int]) -> dict:
    latencies: dict = {name: {kind: [] for kind in KINDS} for name in ports}
    n = 0
    for kind, query in KINDS.items():
        for round_ in range(WARMUP + REQUESTS):
            order = list(ports.items()) if round_ % 2 else list(ports.items())[::-1]
            for name, port in order:
                headers = {"Authorization": f"Bearer {keys[n % len(keys)]}"}
                n += 1
                started = time.perf_counter()
                status, answer = api_bench.http_request(port, "GET", f"/api/v1/posts?{query}", headers, timeout=30)
                took = (time.perf_counter() - started) * 1000
                if status != 200:
                    raise BenchError(f"GET /posts?{query} ({name}) answered {status}: {answer[:500]!r}")
                body = json.loads(answer)
                if len(body["data"]) != 20 or body["pagination"]["totalItems"] != expected[kind]:
                    raise BenchError(f"GET /posts?{query} ({name}): {len(body['data'])} posts, totalItems "
                                     f"{body['pagination']['totalItems']} (expected 20 and {expected[kind]})")
                if round_ >= WARMUP:
                    latencies[name][kind].append(took)
    return latencies


def measure_writers(workspace_id: str) -> dict:
    """Posts settled by WRITERS connections at once, one post a transaction, with the
    counters' trigger and without; then the counters against a COUNT."""
    import psycopg

    with psycopg.connect(PSYCOPG_URL, autocommit=True) as conn:
        ids = [row[0] for row in conn.execute(
            "SELECT id FROM posts WHERE workspace_id = %s AND status = 'scheduled' AND archived_at IS NULL "
            "ORDER BY created_at DESC LIMIT %s", (workspace_id, 2 * WRITERS * WRITES))]
    results = {}
    for variant, batch in (("with counters", ids[::2]), ("without counters", ids[1::2])):
        with psycopg.connect(PSYCOPG_URL, autocommit=True) as conn:
            conn.execute(f"ALTER TABLE posts {'ENABLE' if variant == 'with counters' else 'DISABLE'} "
                         "TRIGGER posts_counted")
        errors, durations, barrier = [], [], threading.Barrier(WRITERS)

        def settle(mine):
            try:
                with psycopg.connect(PSYCOPG_URL) as conn:
                    barrier.wait(30)
                    for post_id in mine:
                        started = time.perf_counter()
                        conn.execute("UPDATE posts SET status = 'published', published_at = now() WHERE id = %s",
                                      (post_id,))
                        conn.commit()
                        durations.append((time.perf_counter() - started) * 1000)
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=settle, args=(batch[n::WRITERS],)) for n in range(WRITERS)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        if errors:
            raise BenchError(f"writers failed ({variant}): {errors[0]!r}")
        results[variant] = {"transactions_per_s": len(durations) / elapsed, **summary(durations)}
        if variant == "with counters":
            with psycopg.connect(PSYCOPG_URL) as conn:
                counted = dict(conn.execute(
                    "SELECT status, count(*) FROM posts WHERE workspace_id = %s GROUP BY status", (workspace_id,)))
                kept = {status: int(total) for status, total in conn.execute(
                    "SELECT status, sum(count) FROM post_counters WHERE workspace_id = %s GROUP BY status",
                    (workspace_id,))}
                rows = conn.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM post_counters "
                                    "WHERE workspace_id = %s GROUP BY livemode, status, archived) AS c",
                                    (workspace_id,)).fetchone()[0]
            if counted != kept:
                raise BenchError(f"counters {kept} differ from the posts {counted}")
            results[variant]["counters_exact"] = True
            results[variant]["most_rows_of_a_counter"] = rows
    with psycopg.connect(PSYCOPG_URL, autocommit=True) as conn:
        conn.execute("ALTER TABLE posts ENABLE TRIGGER posts_counted")
    return results


def main() -> int:
    work_dir = Path(tempfile.mkdtemp(prefix="socialpub-bench-posts-"))
    results: dict = {"load_average_before": os.getloadavg()}
    began = time.perf_counter()
    try:
        recreate_database(DB_NAME)
        env = api_env(PG_URL)
        print("preparing the database ...", flush=True)
        workspace = upgraded_workspace(env, "Posts bench")
        keys = [api_bench.run_cli(["key", "create", "--workspace", workspace["id"], "--name", f"posts bench {n}",
                                   "--all-scopes", "--per-minute", "1000", "--per-day", "100000", "--json"], env)["key"]
                for n in range(KEYS)]
        print(f"loading {POSTS:,} posts (+ {OTHER_WORKSPACES} workspaces of {OTHER_POSTS:,}) ...", flush=True)
        results.update(load(workspace["id"]))
        print(f"  loaded in {results['load_s']:.1f} s, VACUUM ANALYZE {results['vacuum_analyze_s']:.1f} s", flush=True)
        expected = exact_totals(workspace["id"])
        results["plans"] = explain(workspace["id"])
        ports = {"counters": free_port(), "counted": free_port()}
        api_bench.start_gunicorn("api-counters", "socialpub.app:create_app()", ports["counters"], env, work_dir)
        api_bench.start_gunicorn("api-counted", "posts_counted_app:create_app()", ports["counted"], env, work_dir,
                                 ["--chdir", str(BENCH_DIR)])
        print("measuring GET /posts ...", flush=True)
        latencies = measure_lists(ports, keys, expected)
        api_bench.PROCESSES.stop_all()
        results["lists"] = {name: {kind: summary(values) for kind, values in kinds.items()}
                            for name, kinds in latencies.items()}
        results["totals"] = expected
        print("measuring writers at once ...", flush=True)
        results["writers"] = measure_writers(workspace["id"])
    except BenchError as exc:
        print(f"bench failed: {exc}\n(logs in {work_dir})", file=sys.stderr)
        return 2
    finally:
        api_bench.PROCESSES.stop_all()
    results["load_average_after"] = os.getloadavg()
    results["run_s"] = time.perf_counter() - began
    for name, lines in results["plans"].items():
        print(f"\nEXPLAIN ANALYZE {name}:\n  " + "\n  ".join(lines))
    print(f"\nGET /posts over {POSTS:,} posts in one workspace ({OTHER_WORKSPACES} others), one request at a time")
    print(f"  {'request':<26} {'totalItems':>10}  {'counters p50/p95 ms':>20}  {'counted p50/p95 ms':>20}")
    for kind in KINDS:
        mine, before = results["lists"]["counters"][kind], results["lists"]["counted"][kind]
        print(f"  {kind:<26} {expected[kind]:>10,}  {mine['p50_ms']:>9.2f} / {mine['p95_ms']:<8.2f}"
              f"  {before['p50_ms']:>9.2f} / {before['p95_ms']:<8.2f}  "
              f"p95 < {TARGET_P95_MS:g} ms {verdict(mine['p95_ms'] < TARGET_P95_MS)}")
    print(f"\n{WRITERS} writers at once, one post settled a transaction")
    for variant, numbers in results["writers"].items():
        print(f"  {variant:<18} {numbers['transactions_per_s']:8.0f} tx/s  p50 {numbers['p50_ms']:6.2f} ms  "
              f"p95 {numbers['p95_ms']:6.2f} ms  max {numbers['max_ms']:7.2f} ms")
    print(f"  counters exact after the writers: {results['writers']['with counters']['counters_exact']}; "
          f"most rows of one counter: {results['writers']['with counters']['most_rows_of_a_counter']}")
    print(f"\nload average before {results['load_average_before']}, after {results['load_average_after']}; "
          f"run {results['run_s']:.0f} s")
    (BENCH_DIR / "posts-results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
