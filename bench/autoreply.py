"""Auto-reply rule tests at scale: a workspace with 200 enabled rules (keywords of
every match mode, exclusions, RE2 patterns, once-per-author frequencies, replies of
their own and from templates), on PostgreSQL, the API under gunicorn (2 uvicorn
workers) as in production.

Run from the project root: `make bench ONLY=autoreply` (or `.venv/bin/python bench/autoreply.py`).

Measures `POST /auto-reply/rules/{ruleId}/test` latency (p50, p95, max) over 300
requests, one at a time, each sample evaluated against every enabled rule (with an
author, so the once-per-author history is read too), after 30 warm-up requests.

Uses its own database `socialpub_bench_autoreply` (dropped and recreated). Results
are printed and written to bench/autoreply-results.json. Exit status 0 when the
measurement ran (target met or not), 2 when a process failed.
"""
from __future__ import annotations

import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from area_bench import api_env, bench_main, database_url, p95, recreate_database, workspace_and_key
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_autoreply"
DATABASE_URL = database_url(DB_NAME)
RULES = 200
WARMUP = 30
REQUESTS = 300

TARGETS = {"test_p95_ms": 20.0}

WORDS = ["price", "cost", "order", "refund", "shipping", "late", "broken", "hours", "open", "menu", "latte", "vegan",
         "gift", "card", "discount", "delivery", "return", "size", "colour", "stock"]
PATTERNS = [r"(?i)order\s*#?\d{3,}", r"(?i)\b(where|when)\b.*\?", r"(?i)(a+)+$", r"\d{2}:\d{2}", r"(?i)^(hi|hello)\b"]
SAMPLES = [
    "How much does the oat latte cost?",
    "My order #48213 is late, can you check?",
    "Are you open on Sundays? What are your hours?",
    "Love the new menu, vegan options please!",
    "Where is my refund? It has been two weeks.",
    "hello! do you ship gift cards abroad?",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    "Is the size M back in stock in blue colour?",
]


def seed_rules(database, workspace_id: uuid.UUID) -> list[str]:
    """200 enabled test-mode rules of every kind; returns their ids."""
    from sqlalchemy import insert

    from persistence.autoreply import AutoReplyRule
    from socialpub.areas import import_models

    import_models()
    rng = random.Random(18)
    modes = ["any", "all", "exact", "wholeWord"]
    rows = []
    for n in range(RULES):
        keywords = rng.sample(WORDS, rng.randint(1, 4)) if n % 5 else []
        pattern = PATTERNS[n % len(PATTERNS)] if n % 5 == 0 or n % 7 == 0 else None
        if not keywords and pattern is None:
            pattern = PATTERNS[0]
        rows.append(dict(
            id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, name=f"Rule {n}", enabled=True,
            priority=rng.randint(0, 1000), platforms=rng.choice([[], ["mastodon"], ["mastodon", "bluesky"]]),
            message_types=["comment", "mention"],
            trigger={"keywords": keywords, "match": modes[n % 4], "exclude_keywords": rng.sample(WORDS, n % 3),
                     "pattern": pattern},
            reply_text=None if n % 3 == 0 else "Thanks {{author}}! We answer on {{platform}} within the day.",
            reply_template_id="thanks" if n % 3 == 0 else None,
            frequency_mode="oncePerAuthor" if n % 2 else "everyTime", frequency_window_hours=24 if n % 2 else None,
        ))
    with database.transaction() as session:
        session.execute(insert(AutoReplyRule), rows)
    return [str(row["id"]) for row in rows]


def measure(port: int, key: str, rule_ids: list[str]) -> list[float]:
    rng = random.Random(7)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    latencies = []
    for n in range(WARMUP + REQUESTS):
        body = json.dumps({
            "text": rng.choice(SAMPLES), "platform": rng.choice(["mastodon", "bluesky"]),
            "messageType": "comment", "author": f"@fan{n % 20}@example.social",
        }).encode()
        path = f"/api/v1/auto-reply/rules/{rng.choice(rule_ids)}/test"
        started = time.perf_counter()
        status, answer = api_bench.http_request(port, "POST", path, headers, body)
        took = (time.perf_counter() - started) * 1000
        if status != 200:
            raise BenchError(f"POST {path} answered {status}: {answer[:500]!r}")
        evaluations = json.loads(answer)["data"]["evaluations"]
        if len(evaluations) != RULES:
            raise BenchError(f"{len(evaluations)} rules evaluated, not {RULES}")
        if n >= WARMUP:
            latencies.append(took)
    return latencies


def run(work_dir: Path) -> dict:
    from persistence.db import Database

    env = api_env(DATABASE_URL)
    print(f"preparing database {DB_NAME} ...", flush=True)
    recreate_database(DB_NAME)
    workspace, key = workspace_and_key(env, "Auto-reply bench", "autoreply bench", timeout=120)
    database = Database(DATABASE_URL)
    try:
        rule_ids = seed_rules(database, uuid.UUID(workspace["id"]))
    finally:
        database.dispose()
    port = free_port()
    api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
    latencies = sorted(measure(port, key["key"], rule_ids))
    results = {
        "rules": RULES,
        "requests": len(latencies),
        "test_p50_ms": statistics.median(latencies),
        "test_p95_ms": p95(latencies),
        "test_max_ms": latencies[-1],
    }
    print(f"  POST /auto-reply/rules/{{ruleId}}/test with {RULES} enabled rules ({len(latencies)} requests): "
          f"p50 {results['test_p50_ms']:.1f} ms, p95 {results['test_p95_ms']:.1f} ms, max {results['test_max_ms']:.1f} ms",
          flush=True)
    return results


def report(results: dict) -> None:
    print("\nauto-reply rule test")
    value, target = results["test_p95_ms"], TARGETS["test_p95_ms"]
    print(f"  {'test p95, 200 enabled rules':<38} {value:8.2f} ms  target < {target:g} ms  {verdict(value < target)}")


def main() -> int:
    return bench_main("autoreply", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
