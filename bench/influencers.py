"""Influencer search at scale: 100,000 influencers in one workspace's mode, on
PostgreSQL, the API under gunicorn (2 uvicorn workers) as in production.

Run from the project root: `make bench ONLY=influencers` (or `.venv/bin/python bench/influencers.py`).

Measures `GET /influencers` latency (p50, p95, max) over 400 requests, one at a time,
after 40 warm-up requests. Every request has three filters and a sort (the target's
shape), drawn from four shapes that between them use every filter: a niche, a
country and a floor of followers sorted by followers; a platform, a language and a
floor of engagement sorted by engagement; a word of `q`, a niche and a floor of
followers sorted by name; a country, a platform and a ceiling of followers sorted by
followers. Each answer is checked: a full page, its exact total, in order.

The influencers are loaded in batches through records.search_columns, the function
the service derives its search columns with, so the rows are those the API would
have written; then VACUUM ANALYZE, as autovacuum would after such a load.

Uses its own database `socialpub_bench_influencers` (dropped and recreated). Results
are printed and written to bench/influencers-results.json. Exit status 0 when the
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

DB_NAME = "socialpub_bench_influencers"
DATABASE_URL = database_url(DB_NAME)
INFLUENCERS = 100_000
BATCH = 5_000
WARMUP = 40
REQUESTS = 400

TARGETS = {"search_p95_ms": 50.0}

FIRST = ["Ana", "Zoë", "Léa", "Sam", "Li", "Max", "Noor", "Ivan", "Chloé", "Mateo", "Aiko", "Omar", "Emma", "Lucas",
         "Sofía", "Jonas", "Priya", "Kofi", "Mia", "Yusuf", "Elif", "Hugo", "Nina", "Tariq", "Ingrid", "Raúl", "Mei"]
LAST = ["Ruiz", "Martin", "Dubois", "O'Neil", "Wei", "Müller", "Haddad", "Petrov", "Moreau", "García", "Tanaka",
        "Farouk", "Smith", "Silva", "López", "Berg", "Sharma", "Mensah", "Rossi", "Yılmaz", "Kaya", "Bernard",
        "Novak", "Nasser", "Larsen", "Ortega", "Chen"]
NICHES = ["fitness", "running", "yoga", "home cooking", "vegan food", "baking", "travel", "van life", "fashion",
          "streetwear", "beauty", "skincare", "gaming", "tech reviews", "photography", "parenting", "finance",
          "crypto", "diy", "gardening", "pets", "music", "comedy", "books", "art", "cars", "football", "hiking",
          "interior design", "sustainability"]
# Countries and the language most of their influencers post in, by weight.
COUNTRIES = [("US", "en", 24), ("GB", "en", 8), ("FR", "fr", 7), ("DE", "de", 7), ("ES", "es", 6), ("BR", "pt", 6),
             ("MX", "es", 5), ("IT", "it", 5), ("IN", "en", 5), ("JP", "ja", 4), ("CA", "en", 4), ("AU", "en", 3),
             ("NL", "nl", 3), ("SE", "sv", 2), ("TR", "tr", 2), ("KR", "ko", 2), ("NG", "en", 2), ("PL", "pl", 2),
             ("AR", "es", 2), ("ID", "id", 1)]
PLATFORMS = [("instagram", 40), ("tiktok", 30), ("youtube", 15), ("twitter", 12), ("threads", 8), ("linkedin", 5),
             ("mastodon", 3), ("bluesky", 4), ("pinterest", 5), ("facebook", 8)]


def _influencer(rng: random.Random, n: int) -> dict:
    from socialpub.influencers import records

    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    slug = f"{records.fold(name).replace(' ', '.').replace(chr(39), '')}{n}"
    chosen = set()
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        chosen.add(rng.choices([p for p, _ in PLATFORMS], weights=[w for _, w in PLATFORMS])[0])
    handles = [{"platform": platform, "handle": f"@{slug}" if platform != "mastodon" else f"@{slug}@mastodon.social"}
               for platform in sorted(chosen)]
    country, language, _ = rng.choices(COUNTRIES, weights=[w for _, _, w in COUNTRIES])[0]
    if rng.random() < 0.15:
        language = "en"
    niches = rng.sample(NICHES, rng.choice((1, 2, 2, 3)))
    email = f"{slug}@example.com" if rng.random() < 0.7 else None
    followers = int(min(50_000_000, rng.lognormvariate(10.3, 1.6)))
    engagement = None if rng.random() < 0.1 else round(min(25.0, rng.lognormvariate(1.0, 0.6)), 2)
    return dict(name=name, handles=handles, email=email, followers=followers, engagement_rate=engagement,
                niches=niches, location=country, language=language,
                **records.search_columns(name=name, handles=handles, email=email, niches=niches))


def load_influencers(workspace_id: uuid.UUID) -> list[str]:
    """The influencers, loaded in batches; returns the words their names are made of."""
    import datetime as dt

    from sqlalchemy import insert

    from persistence.db import Database
    from persistence.influencers import Influencer, InfluencerHandle
    from socialpub.areas import import_models
    from socialpub.influencers import records

    import_models()
    rng = random.Random(2026)
    database = Database(DATABASE_URL)
    now = dt.datetime.now(dt.timezone.utc)
    try:
        for start in range(0, INFLUENCERS, BATCH):
            rows, handles = [], []
            for n in range(start, min(INFLUENCERS, start + BATCH)):
                created = now - dt.timedelta(seconds=INFLUENCERS - n)
                row = dict(id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, created_at=created,
                           updated_at=created, notes=None, **_influencer(rng, n))
                rows.append(row)
                handles += [dict(influencer_id=row["id"], platform=entry["platform"],
                                 handle_key=records.handle_key(entry["handle"]), workspace_id=workspace_id,
                                 livemode=False) for entry in row["handles"]]
            with database.transaction() as session:
                session.execute(insert(Influencer), rows)
                session.execute(insert(InfluencerHandle), handles)
    finally:
        database.dispose()
    vacuum_analyze(DATABASE_URL)
    return [records.fold(word) for word in FIRST + LAST]


def queries(rng: random.Random, words: list[str]) -> list[tuple[str, dict]]:
    """(shape, parameters) of the measured requests: three filters and a sort each."""
    countries = [c for c, _, _ in COUNTRIES[:10]]
    shapes = [
        ("niche+location+followersMin, -followers",
         lambda: {"niche": rng.choice(NICHES), "location": rng.choice(countries),
                  "followersMin": rng.choice((1_000, 5_000, 10_000, 50_000)), "sort": "-followers"}),
        ("platform+language+engagementMin, -engagementRate",
         lambda: {"platform": rng.choice(("instagram", "tiktok", "youtube", "twitter")),
                  "language": rng.choice(("en", "es", "fr", "de", "pt")), "engagementMin": rng.choice((1, 2, 3, 5)),
                  "sort": "-engagementRate"}),
        ("q+niche+followersMin, name",
         lambda: {"q": rng.choice(words), "niche": rng.choice(NICHES), "followersMin": rng.choice((1_000, 10_000)),
                  "sort": "name"}),
        ("location+platform+followersMax, followers",
         lambda: {"location": rng.choice(countries), "platform": rng.choice(("instagram", "tiktok", "youtube")),
                  "followersMax": rng.choice((20_000, 100_000, 500_000)), "sort": "followers"}),
    ]
    drawn = []
    for n in range(WARMUP + REQUESTS):
        shape, make = shapes[n % len(shapes)]
        drawn.append((shape, make()))
    return drawn


def _checked(params: dict, body: dict) -> None:
    data, total = body["data"], body["pagination"]["totalItems"]
    if len(data) != min(20, total):
        raise BenchError(f"{params}: {len(data)} influencers on the first page of {total}")
    key, reverse = params["sort"].lstrip("-"), params["sort"].startswith("-")
    values = [each[key] if key != "name" else None for each in data]
    if key != "name" and None not in values and values != sorted(values, reverse=reverse):
        raise BenchError(f"{params}: not in {params['sort']} order: {values}")


def measure(port: int, key: str, words: list[str]) -> dict:
    rng = random.Random(7)
    headers = {"Authorization": f"Bearer {key}"}
    latencies: dict[str, list[float]] = {}
    totals: dict[str, list[int]] = {}
    for n, (shape, params) in enumerate(queries(rng, words)):
        path = "/api/v1/influencers?" + urlencode(params)
        took, answer = timed_get(port, path, headers)
        body = json.loads(answer)
        _checked(params, body)
        if n >= WARMUP:
            latencies.setdefault(shape, []).append(took)
            totals.setdefault(shape, []).append(body["pagination"]["totalItems"])
    return {"latencies": latencies, "totals": totals}


def run(work_dir: Path) -> dict:
    from persistence.db import Database  # noqa: F401 - fails early without the project on sys.path

    env = api_env(DATABASE_URL)
    print(f"preparing database {DB_NAME} ...", flush=True)
    recreate_database(DB_NAME)
    workspace, key = workspace_and_key(env, "Influencer bench", "influencer bench")
    started = time.perf_counter()
    words = load_influencers(uuid.UUID(workspace["id"]))
    print(f"  loaded {INFLUENCERS:,} influencers in {time.perf_counter() - started:.1f} s", flush=True)
    background = api_bench.background_load()
    port = free_port()
    api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
    measured = measure(port, key["key"], words)
    every = sorted(value for values in measured["latencies"].values() for value in values)
    results = {
        "influencers": INFLUENCERS,
        "requests": len(every),
        "search_p50_ms": statistics.median(every),
        "search_p95_ms": p95(every),
        "search_max_ms": every[-1],
        "shapes": {
            shape: {"p50_ms": statistics.median(values), "p95_ms": p95(values), "max_ms": max(values),
                    "median_total": statistics.median(measured["totals"][shape])}
            for shape, values in measured["latencies"].items()
        },
        "background_cpu_percent": background,
    }
    for shape, numbers in results["shapes"].items():
        print(f"  {shape:<52} p50 {numbers['p50_ms']:6.1f} ms  p95 {numbers['p95_ms']:6.1f} ms  "
              f"max {numbers['max_ms']:6.1f} ms  (median total {numbers['median_total']:,.0f})", flush=True)
    return results


def report(results: dict) -> None:
    print(f"\ninfluencer search over {INFLUENCERS:,} influencers (three filters and a sort; "
          f"other processes' CPU before it: {results['background_cpu_percent']} %)")
    value, target = results["search_p95_ms"], TARGETS["search_p95_ms"]
    print(f"  {'search p95':<38} {value:8.2f} ms  target < {target:g} ms  {verdict(value < target)}")
    print(f"  {'search p50':<38} {results['search_p50_ms']:8.2f} ms")


def main() -> int:
    return bench_main("influencers", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
