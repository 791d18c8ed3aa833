"""Competitor insights at their largest: 20 competitors (a workspace's mode's most)
with 90 days of posts each, on PostgreSQL, the API under gunicorn (2 uvicorn
workers) as in production.

Run from the project root: `make bench ONLY=competitors` (or `.venv/bin/python bench/competitors.py`).

Each competitor posts POSTS_PER_DAY times a day on average (0 to twice that, at
random hours, with hashtags and engagements drawn from a long tail, a few breakout
posts among them) and has its followers read every day. The posts are stored through
socialpub.competitors.ingest.store_posts, the function the refresh stores them with,
a day of a competitor at a time, so the posts, the daily figures and the running
totals are those the service would have kept; then VACUUM ANALYZE, as autovacuum would after such a load.

Measures `GET /competitors/insights` over the 90 days for all 20 competitors (p50,
p95, max) over 200 requests, one at a time, after 20 warm-up requests; each answer
is checked (20 competitors, their posts' total). Also measures, for information,
the comparison over the same range and `GET /competitors/{id}` (the area's smallest
request: the floor the machine's load sets at the time).

Uses its own database `socialpub_bench_competitors` (dropped and recreated). Results
are printed and written to bench/competitors-results.json. Exit status 0 when the
measurement ran (target met or not), 2 when a process failed.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from area_bench import (
    api_env,
    bench_main,
    database_url,
    p95,
    recreate_database,
    timed_get,
    vacuum_analyze,
    workspace_and_key,
)
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_competitors"
DATABASE_URL = database_url(DB_NAME)
COMPETITORS = 20
DAYS = 90
POSTS_PER_DAY = 10
WARMUP = 20
REQUESTS = 200
HASHTAGS = ["coffee", "latte", "espresso", "launch", "sale", "tips", "community", "giveaway", "behindthescenes",
            "news", "barista", "morning", "weekend", "brunch", "local", "roastery", "beans", "travel", "cafe", "love"]

TARGETS = {"insights_p95_ms": 100.0}


def load(workspace_id: uuid.UUID, today: dt.date) -> int:
    """The competitors and their posts; returns how many posts were stored."""
    from persistence.db import Database
    from socialpub.areas import import_models
    from socialpub.competitors import service
    from socialpub.competitors.ingest import IncomingPost, record_followers, store_posts
    from socialpub.tenancy import Actor, TenantScope

    import_models()
    rng = random.Random(2026)
    database = Database(DATABASE_URL)
    stored = 0
    now = dt.datetime.now(dt.timezone.utc)
    try:
        for n in range(COMPETITORS):
            with database.transaction() as session:
                scope = TenantScope.workspace(session, workspace_id, actor=Actor.operator("bench"))
                competitor = service.add_competitor(scope, livemode=False, name=f"Rival {n:02d}", handles=[
                    {"platform": "mastodon", "handle": f"@rival{n}@mastodon.social"},
                    {"platform": "bluesky", "handle": f"rival{n}.bsky.social"}])
            followers = rng.randint(2_000, 200_000)
            tags = rng.sample(HASHTAGS, 8)
            for offset in range(DAYS, -1, -1):
                day = today - dt.timedelta(days=offset)
                posts = []
                for _ in range(rng.randint(0, 2 * POSTS_PER_DAY)):
                    posted = dt.datetime.combine(day, dt.time(rng.randint(0, 23), rng.randint(0, 59)), tzinfo=dt.timezone.utc)
                    scale = 25 if rng.random() < 0.01 else 1
                    posts.append(IncomingPost(
                        platform=rng.choice(("mastodon", "bluesky")), external_id=f"bench-{n}-{uuid.uuid4().hex}",
                        handle=f"rival{n}.bsky.social", text="A post #" + rng.choice(tags), url=None, posted_at=posted,
                        likes=int(rng.lognormvariate(3, 1)) * scale, replies=int(rng.lognormvariate(1, 1)) * scale,
                        reposts=int(rng.lognormvariate(1.5, 1)) * scale, hashtags=tuple(rng.sample(tags, rng.randint(0, 3))),
                    ))
                followers += rng.randint(-20, 200)
                with database.transaction() as session:
                    competitor_row = session.merge(competitor)
                    added, _ = store_posts(session, competitor=competitor_row, posts=posts,
                                           followers={f"rival{n}.bsky.social": followers}, source="profile", now=now)
                    record_followers(session, competitor_id=competitor.id, day=day, followers=followers)
                stored += added
    finally:
        database.dispose()
    vacuum_analyze(DATABASE_URL)
    return stored


def measure(port: int, key: str, path: str, check) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    latencies = []
    for n in range(WARMUP + REQUESTS):
        took, answer = timed_get(port, path, headers)
        check(json.loads(answer)["data"])
        if n >= WARMUP:
            latencies.append(took)
    return latencies


def run(work_dir: Path) -> dict:
    # No refresh reads the sandbox's profiles during the measurement.
    env = api_env(DATABASE_URL, SOCIALPUB_COMPETITORS_REFRESH_INTERVAL_SECONDS="86400",
                  SOCIALPUB_COMPETITORS_DISPATCH_INTERVAL_SECONDS="86400")
    print(f"preparing database {DB_NAME} ...", flush=True)
    recreate_database(DB_NAME)
    workspace, key = workspace_and_key(env, "Competitor bench", "competitor bench", mode="test")
    today = dt.datetime.now(dt.timezone.utc).date()
    started = time.perf_counter()
    posts = load(uuid.UUID(workspace["id"]), today)
    print(f"  loaded {COMPETITORS} competitors with {posts:,} posts over {DAYS} days in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    background = api_bench.background_load()
    port = free_port()
    api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
    span = {"from": (today - dt.timedelta(days=DAYS - 1)).isoformat(), "to": today.isoformat()}
    in_range = {}

    def check_insights(data: dict) -> None:
        if len(data["competitors"]) != COMPETITORS or data["days"] != DAYS:
            raise BenchError(f"insights covered {len(data['competitors'])} competitors over {data['days']} days")
        in_range["posts"] = sum(each["posts"] for each in data["competitors"])
        in_range["first_id"] = data["competitors"][0]["competitorId"]
        if not all(each["topHashtags"] and each["bestTimes"] for each in data["competitors"]):
            raise BenchError("a competitor's insights lack hashtags or posting times")

    def check_compare(data: dict) -> None:
        if len(data["entries"]) != COMPETITORS + 1 or len(data["entries"][1]["daily"]) != DAYS:
            raise BenchError("the comparison does not cover every competitor and day")

    insights = measure(port, key["key"], "/api/v1/competitors/insights?" + urlencode(span), check_insights)
    compare = measure(port, key["key"], "/api/v1/competitors/compare?" + urlencode(span), check_compare)
    # The floor under the machine's load at the time: the smallest request of the area.
    floor = measure(port, key["key"], "/api/v1/competitors/" + in_range["first_id"], lambda data: None)
    return {
        "competitors": COMPETITORS, "days": DAYS, "posts": posts, "posts_in_range": in_range["posts"],
        "requests": len(insights),
        "insights_p50_ms": statistics.median(insights), "insights_p95_ms": p95(insights), "insights_max_ms": max(insights),
        "compare_p50_ms": statistics.median(compare), "compare_p95_ms": p95(compare), "compare_max_ms": max(compare),
        "get_competitor_p50_ms": statistics.median(floor), "get_competitor_p95_ms": p95(floor),
        "background_cpu_percent": background,
    }


def report(results: dict) -> None:
    print(f"\ncompetitor insights: {COMPETITORS} competitors, {results['posts_in_range']:,} posts in {DAYS} days "
          f"(other processes' CPU before it: {results['background_cpu_percent']} %)")
    value, target = results["insights_p95_ms"], TARGETS["insights_p95_ms"]
    print(f"  {'insights p95':<38} {value:8.2f} ms  target < {target:g} ms  {verdict(value < target)}")
    print(f"  {'insights p50':<38} {results['insights_p50_ms']:8.2f} ms")
    print(f"  {'compare p95 (for information)':<38} {results['compare_p95_ms']:8.2f} ms")
    print(f"  {'GET one competitor p50 / p95 (floor)':<38} {results['get_competitor_p50_ms']:8.2f} ms / "
          f"{results['get_competitor_p95_ms']:.2f} ms")


def main() -> int:
    return bench_main("competitors", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
