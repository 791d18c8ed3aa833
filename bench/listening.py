"""Social listening at scale, on PostgreSQL and Redis, the API under gunicorn with 2
uvicorn workers as in production.

Run from the project root: `make bench ONLY=listening` (or `.venv/bin/python bench/listening.py`).

Measures:
  1. ingest: 10,000 signals through `POST /listening/signals/bulk`, 100 a request, from
     CONNECTIONS clients at once, each scored, matched against 5 monitors, counted into
     the daily counts and judged by 2 crisis rules (the crisis area subscribes to every
     ingest): signals per second end to end (first request sent to last answer), and
     the p50/p95/max of one bulk request;
  2. stats: with 1,000,000 more signals stored (posted over the last 180 days, matched
     to the monitors; inserted with COPY, not through the API, with their daily
     counts), `GET /listening/stats` for 7d, 30d and 90d, one request at a time: p50,
     p95, max. Beside it, for comparison, the 90-day stats counted straight from the
     monitor links' index (monitor, time), as the stats could be without daily
     counts: the time of that one query, in the database alone.

Uses its own database `socialpub_bench_listening` (dropped and recreated) and Redis
database 11 (flushed). Results are printed with the machine's load and written to
bench/listening-results.json. Exit status 0 when the measurement ran (targets met or
not), 2 when a process failed or answered wrongly.
"""
from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

from area_bench import api_env, bench_main, database_url, p95, recreate_database, summary, workspace_and_key
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_listening"
DATABASE_URL = database_url(DB_NAME)
PSYCOPG_URL = f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_URL = "redis://127.0.0.1:6379/11"

INGESTED = 10_000
PER_REQUEST = 100
CONNECTIONS = 4
WARMUP_REQUESTS = 5
SEEDED = 1_000_000
SEED_DAYS = 180
STATS_WARMUP = 20
STATS_REQUESTS = 200

TARGETS = {"ingest_signals_per_s": 1000.0, "stats_p95_ms": 100.0}

MONITORS = [
    {"name": "Acme brand", "keywords": ["acme", "acme.com"], "excludedKeywords": ["giveaway"]},
    {"name": "Acme phone", "keywords": ["acme phone", "phone"], "requiredKeywords": ["acme"]},
    {"name": "Globex", "keywords": ["globex"]},
    {"name": "Batteries", "keywords": ["battery", "batteries"], "platforms": ["mastodon", "bluesky"]},
    {"name": "Support", "keywords": ["support", "help desk", "customer service"], "languages": ["en"]},
]
SENTENCES = [
    "I love the new {brand} phone, the battery lasts for days!",
    "{brand} support is awful. I have waited two weeks and nobody answers.",
    "Just saw the {brand} keynote, the phone looks decent.",
    "Is anyone else having trouble with {brand} customer service today?",
    "{brand} batteries are the best I have tried, great value.",
    "Worst experience ever with {brand}. Never again!!!",
    "Thinking about switching to {brand}, any opinions?",
    "The {brand} giveaway is live, click the link to win",
    "Weather is nice today, going for a walk.",
    "{brand} help desk fixed my issue in five minutes, thank you :)",
]
BRANDS = ["Acme", "Globex", "Initech", "acme.com", "Acme phone"]
PLATFORMS = ["mastodon", "bluesky", "twitter", "linkedin", "threads"]


def machine_load() -> dict:
    one, five, fifteen = os.getloadavg()
    return {"cpus": os.cpu_count(), "loadavg_1m": one, "loadavg_5m": five, "busy_percent": api_bench.background_load()}


class Client:
    """One keep-alive connection to the API."""

    def __init__(self, port: int, key: str):
        self.port = port
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, float]:
        payload = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        try:
            self.connection.request(method, f"/api/v1{path}", body=payload, headers=self.headers)
            response = self.connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            raise
        took = (time.perf_counter() - started) * 1000
        return response.status, json.loads(raw) if raw else {}, took


def batch(rng: random.Random, run: str, start: int, now: dt.datetime) -> list[dict]:
    items = []
    for n in range(start, start + PER_REQUEST):
        sentence = rng.choice(SENTENCES).format(brand=rng.choice(BRANDS))
        items.append({
            "platform": rng.choice(PLATFORMS), "externalId": f"bench-{run}-{n}", "author": f"@user{rng.randint(1, 500)}",
            "content": sentence, "language": rng.choice(["en", "en", "en", None]), "reach": rng.randint(0, 50_000),
            "postedAt": (now - dt.timedelta(minutes=rng.randint(0, 48 * 60))).isoformat(),
        })
    return items


def ingest(port: int, key: str) -> dict:
    rng = random.Random(2026)
    run = uuid.uuid4().hex[:8]
    now = dt.datetime.now(dt.timezone.utc)
    warm = Client(port, key)
    for n in range(WARMUP_REQUESTS):
        status, answer, _ = warm.call("POST", "/listening/signals/bulk", {"signals": batch(rng, f"warm{run}", n * 100, now)})
        if status != 200:
            raise BenchError(f"warm-up bulk ingest answered {status}: {str(answer)[:500]}")
    bodies = [{"signals": batch(rng, run, n * PER_REQUEST, now)} for n in range(INGESTED // PER_REQUEST)]
    latencies: list[float] = []
    created: Counter = Counter()
    failures: list[str] = []
    lock = threading.Lock()
    pending = iter(bodies)

    def worker():
        client = Client(port, key)
        while True:
            with lock:
                body = next(pending, None)
            if body is None:
                return
            status, answer, took = client.call("POST", "/listening/signals/bulk", body)
            with lock:
                latencies.append(took)
                if status != 200:
                    failures.append(f"{status}: {str(answer)[:300]}")
                else:
                    created["created"] += answer["data"]["created"]

    threads = [threading.Thread(target=worker) for _ in range(CONNECTIONS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - started
    if failures:
        raise BenchError(f"{len(failures)} bulk ingests failed, e.g. {failures[0]}")
    if created["created"] != INGESTED:
        raise BenchError(f"{created['created']} signals created, not {INGESTED}")
    latencies.sort()
    return {
        "ingested": INGESTED, "per_request": PER_REQUEST, "connections": CONNECTIONS, "ingest_s": took,
        "ingest_signals_per_s": INGESTED / took,
        "bulk_p50_ms": statistics.median(latencies), "bulk_p95_ms": p95(latencies),
        "bulk_max_ms": latencies[-1],
    }


def ingest_checks(workspace_id: str) -> dict:
    """What the ingest left: signals, monitor links, daily counts and crisis counters."""
    import psycopg

    with psycopg.connect(PSYCOPG_URL) as conn:
        def one(sql):
            return conn.execute(sql, {"ws": workspace_id}).fetchone()[0]

        return {
            "signals_stored": one("SELECT count(*) FROM listening_signals WHERE workspace_id = %(ws)s"),
            "monitor_links": one("SELECT count(*) FROM listening_signal_monitors WHERE workspace_id = %(ws)s"),
            "daily_counted": one("SELECT coalesce(sum(signals), 0) FROM listening_daily WHERE workspace_id = %(ws)s "
                                 "AND monitor_id = '00000000-0000-0000-0000-000000000000'"),
            "crisis_counted": one("SELECT coalesce(sum(total), 0) FROM crisis_counters"),
            "incidents": one("SELECT count(*) FROM crisis_incidents WHERE workspace_id = %(ws)s"),
        }


def seed(workspace_id: str, monitor_ids: list[str]) -> dict:
    """SEEDED signals over the last SEED_DAYS days, in time order, with their monitor
    links (each matching none to two monitors) and daily counts, by COPY."""
    import psycopg

    rng = random.Random(7)
    now = dt.datetime.now(dt.timezone.utc)
    start = now - dt.timedelta(days=SEED_DAYS)
    span = (now - start).total_seconds()
    offsets = sorted(rng.random() * span for _ in range(SEEDED))
    labels = ("positive", "negative", "neutral")
    daily: Counter = Counter()
    links = 0
    started = time.perf_counter()
    with psycopg.connect(PSYCOPG_URL) as conn:
        with conn.cursor() as cur:
            signal_copy = ("COPY listening_signals (id, workspace_id, livemode, created_at, updated_at, platform, "
                           "external_id, author, content, url, language, reach, posted_at, sentiment_score, "
                           "sentiment_label) FROM STDIN")
            link_rows = []
            with cur.copy(signal_copy) as copy:
                for n, offset in enumerate(offsets):
                    posted = start + dt.timedelta(seconds=offset)
                    label = labels[rng.randrange(3)]
                    score = {"positive": 0.6, "negative": -0.6, "neutral": 0.0}[label]
                    signal_id = uuid.uuid4()
                    platform = PLATFORMS[n % len(PLATFORMS)]
                    copy.write_row((signal_id, workspace_id, False, now, now, platform, f"seed-{n}",
                                    f"@user{n % 5000}", SENTENCES[n % len(SENTENCES)].format(brand=BRANDS[n % 5]),
                                    None, "en", n % 10_000, posted, score, label))
                    day = posted.date()
                    daily[(day, "00000000-0000-0000-0000-000000000000", label)] += 1
                    for monitor_id in rng.sample(monitor_ids, rng.choice((0, 1, 1, 2))):
                        link_rows.append((signal_id, monitor_id, workspace_id, False, posted, label, platform))
                        daily[(day, monitor_id, label)] += 1
            links = len(link_rows)
            with cur.copy("COPY listening_signal_monitors (signal_id, monitor_id, workspace_id, livemode, posted_at, "
                          "sentiment_label, platform) FROM STDIN") as copy:
                for row in link_rows:
                    copy.write_row(row)
            cur.executemany(
                "INSERT INTO listening_daily (workspace_id, livemode, day, monitor_id, sentiment_label, signals) "
                "VALUES (%s, false, %s, %s, %s, %s) ON CONFLICT (workspace_id, livemode, day, monitor_id, "
                "sentiment_label) DO UPDATE SET signals = listening_daily.signals + excluded.signals",
                [(workspace_id, day, monitor_id, label, count) for (day, monitor_id, label), count in daily.items()],
            )
        conn.commit()
    with psycopg.connect(PSYCOPG_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE listening_signals")
        conn.execute("VACUUM ANALYZE listening_signal_monitors")
        conn.execute("VACUUM ANALYZE listening_daily")
    return {"seeded": SEEDED, "seeded_links": links, "daily_rows": len(daily), "seed_s": time.perf_counter() - started}


def measure_stats(port: int, key: str, period: str) -> dict:
    client = Client(port, key)
    latencies = []
    for n in range(STATS_WARMUP + STATS_REQUESTS):
        status, answer, took = client.call("GET", f"/listening/stats?period={period}")
        if status != 200:
            raise BenchError(f"GET /listening/stats answered {status}: {str(answer)[:500]}")
        if n >= STATS_WARMUP:
            latencies.append(took)
    return {**summary(latencies), "signals": answer["data"]["totals"]["signals"] + answer["data"]["previous"]["signals"]}


def from_link_index(workspace_id: str, monitor_ids: list[str]) -> dict:
    """The 90-day stats' monitor counts straight from the links (no daily counts):
    its best time of 5, in the database."""
    import psycopg

    now = dt.datetime.now(dt.timezone.utc)
    since, before = now - dt.timedelta(days=90), now - dt.timedelta(days=180)
    sql = ("SELECT monitor_id, posted_at >= %(since)s, sentiment_label, count(*) FROM listening_signal_monitors "
           "WHERE workspace_id = %(ws)s AND livemode = false AND monitor_id = ANY(%(monitors)s) "
           "AND posted_at >= %(before)s AND posted_at < %(now)s GROUP BY 1, 2, 3")
    times = []
    with psycopg.connect(PSYCOPG_URL) as conn:
        for _ in range(5):
            started = time.perf_counter()
            rows = conn.execute(sql, {"since": since, "before": before, "now": now, "ws": workspace_id,
                                      "monitors": [uuid.UUID(m) for m in monitor_ids]}).fetchall()
            times.append((time.perf_counter() - started) * 1000)
        counted = sum(row[3] for row in rows)
    return {"link_index_90d_ms": min(times), "link_index_rows_counted": counted}


def run(work_dir: Path) -> dict:
    env = {**api_env(DATABASE_URL), "REDIS_URL": REDIS_URL}
    results: dict = {"load_before": machine_load()}
    print(f"preparing database {DB_NAME} and Redis {REDIS_URL} "
          f"(machine: {results['load_before']['cpus']} CPUs, load {results['load_before']['loadavg_1m']:.2f}, "
          f"{results['load_before']['busy_percent']}% busy) ...", flush=True)
    recreate_database(DB_NAME, REDIS_URL)
    workspace, created = workspace_and_key(env, "Listening bench", "listening bench", timeout=120)
    key = created["key"]
    port = free_port()
    api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
    setup = Client(port, key)
    monitor_ids = []
    for monitor in MONITORS:
        status, answer, _ = setup.call("POST", "/listening/monitors", monitor)
        if status != 201:
            raise BenchError(f"POST /listening/monitors answered {status}: {answer}")
        monitor_ids.append(answer["data"]["id"])
    for rule in (
        {"name": "Complaints spike", "monitorIds": monitor_ids[:2], "severity": "high",
         "condition": {"type": "negativeSpike", "windowMinutes": 30, "threshold": 3, "minimumVolume": 50}},
        {"name": "Sentiment floor", "severity": "medium",
         "condition": {"type": "sentimentFloor", "windowMinutes": 60, "threshold": -0.8, "minimumVolume": 100}},
    ):
        status, answer, _ = setup.call("POST", "/crisis/rules", rule)
        if status != 201:
            raise BenchError(f"POST /crisis/rules answered {status}: {answer}")

    print(f"  ingesting {INGESTED:,} signals, {PER_REQUEST} a request, {CONNECTIONS} connections ...", flush=True)
    results.update(ingest(port, key))
    results.update(ingest_checks(workspace["id"]))
    print(f"  ingest: {results['ingest_signals_per_s']:,.0f} signals/s ({results['ingest_s']:.2f} s), bulk request "
          f"p50 {results['bulk_p50_ms']:.0f} ms, p95 {results['bulk_p95_ms']:.0f} ms, max {results['bulk_max_ms']:.0f} ms; "
          f"{results['monitor_links']:,} monitor links, {results['daily_counted']:,} signals in the daily counts, "
          f"{results['crisis_counted']:,} counted by crisis rules", flush=True)
    results["load_after_ingest"] = machine_load()

    print(f"  seeding {SEEDED:,} signals over {SEED_DAYS} days (COPY) ...", flush=True)
    results.update(seed(workspace["id"], monitor_ids))
    print(f"  seeded in {results['seed_s']:.1f} s: {results['seeded_links']:,} monitor links, "
          f"{results['daily_rows']:,} daily rows", flush=True)
    results["load_before_stats"] = machine_load()
    for period in ("7d", "30d", "90d"):
        measured = measure_stats(port, key, period)
        results[f"stats_{period}"] = measured
        print(f"  GET /listening/stats?period={period}: p50 {measured['p50_ms']:.1f} ms, p95 {measured['p95_ms']:.1f} ms, "
              f"max {measured['max_ms']:.1f} ms ({measured['signals']:,} signals in the two periods)", flush=True)
    results["stats_p95_ms"] = max(results[f"stats_{period}"]["p95_ms"] for period in ("7d", "30d", "90d"))
    results.update(from_link_index(workspace["id"], monitor_ids))
    print(f"  the 90-day monitor counts straight from the link index instead: {results['link_index_90d_ms']:.0f} ms "
          f"in the database ({results['link_index_rows_counted']:,} links counted)", flush=True)
    return results


def report(results: dict) -> None:
    checks = [
        (f"ingest, {INGESTED:,} signals", results["ingest_signals_per_s"], "/s", TARGETS["ingest_signals_per_s"], False),
        ("bulk request p95 (100 signals)", results["bulk_p95_ms"], "ms", None, True),
        (f"stats p95, {SEEDED:,} signals", results["stats_p95_ms"], "ms", TARGETS["stats_p95_ms"], True),
    ]
    load = results["load_before"]
    print(f"\nsocial listening (machine: {load['cpus']} CPUs; load {load['loadavg_1m']:.2f} and "
          f"{load['busy_percent']}% busy before, {results['load_before_stats']['busy_percent']}% before the stats)")
    for name, value, unit, target, below in checks:
        if target is None:
            print(f"  {name:<38} {value:8.1f} {unit:<3}")
            continue
        ok = value < target if below else value >= target
        print(f"  {name:<38} {value:8.1f} {unit:<3} target {'<' if below else '>='} {target:g} {unit}  {verdict(ok)}")


def main() -> int:
    return bench_main("listening", run, report, TARGETS, json_default=str)


if __name__ == "__main__":
    sys.exit(main())
