"""Search at scale: 200,000 documents across the indexes of one workspace's mode, the
API under gunicorn (2 uvicorn workers) as in production, on PostgreSQL and on SQLite.

Run from the project root: `make bench ONLY=search` (or `.venv/bin/python bench/search.py`).

Measures `GET /search` (every index, with the counts per index) one request at a
time, after warm-up requests, for four kinds of query: one word, a two-word phrase
taken from a document, a prefix (the first five letters of a word of six or more,
`abcde*`) and a misspelt word (one typo in a word of
6 letters or more, answered through the vocabulary with `didYouMean`). Each answer is
checked (matches found, a full first page, the typo corrected). Then `POST /posts`
(a draft) against this API and against the same API without the search area
(bench/search_off_app.py), requests alternating between them, on PostgreSQL: what
indexing adds.

The documents are written as the service writes them (socialpub.search.documents:
the same rows, their vocabulary caught up as socialpub.search.vocabulary does), in
batches, their text drawn from 6,000 made-up words with Zipf's frequencies; then
VACUUM ANALYZE (PostgreSQL). The words and prefixes searched are drawn from all but
the 20 most frequent words (which are in every tenth to every second document, as
"the" and "and" are). Uses its own databases
(`socialpub_bench_search`, dropped and recreated; a SQLite file in a temporary
directory). Results are printed and written to bench/search-results.json. Exit status
0 when the measurement ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from area_bench import (
    api_env,
    bench_main,
    database_url,
    recreate_database,
    summary,
    timed_get,
    vacuum_analyze,
    workspace_and_key,
)
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_search"
PG_URL = database_url(DB_NAME)
DOCUMENTS = 200_000
BATCH = 5_000
WORDS = 6_000
WARMUP = 20
REQUESTS = 200  # per kind of query
POSTS = 300  # per API, for the indexing overhead
INDEXES = [("posts", 0.35), ("signals", 0.3), ("rss-items", 0.15), ("templates", 0.05), ("influencers", 0.1),
           ("conversations", 0.05)]

TARGETS = {
    "postgresql": {"word_p95_ms": 50.0, "phrase_p95_ms": 50.0, "prefix_p95_ms": 50.0, "typo_p95_ms": 100.0},
    "sqlite": {"word_p95_ms": 100.0, "phrase_p95_ms": 100.0, "prefix_p95_ms": 100.0},
    "post_overhead_percent": 10.0,
}


def made_up_words(rng: random.Random) -> list[str]:
    onsets = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "br", "cl", "st", "tr", "pl", "gr", "sh"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
    codas = ["", "", "n", "r", "s", "t", "l", "ng", "st", "rk"]
    words: set[str] = set()
    while len(words) < WORDS:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(syllables)))
    # From a sorted list: a set's order changes with the interpreter's hash seed, and
    # the words drawn (and searched) with it.
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


def documents(words: list[str]) -> list[tuple[str, str, str]]:
    """(index, title, body) of every document, the same for both databases."""
    rng = random.Random(2026)
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1 / rank
        cumulative.append(total)
    names, shares = zip(*INDEXES)
    made = []
    for _ in range(DOCUMENTS):
        body = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 40)))
        title = " ".join(body.split()[:6])
        made.append((rng.choices(names, weights=shares)[0], title.capitalize(), body.capitalize() + "."))
    return made


def load(database_url: str, workspace_id: uuid.UUID, made: list[tuple[str, str, str]]) -> None:
    """The documents and their vocabulary, as a caught-up workspace has them (written by
    socialpub.search.documents, their words added as socialpub.search.vocabulary adds them)."""
    from sqlalchemy import insert

    from persistence.db import Database
    from persistence.search import SearchTerm
    from socialpub.areas import import_models
    from socialpub.search import documents, text

    import_models()
    database = Database(database_url)
    vocabulary: set[str] = set()
    try:
        for start in range(0, len(made), BATCH):
            rows = []
            for index, title, body in made[start:start + BATCH]:
                record_id = uuid.uuid4()
                # Caught up: the document's words are in the vocabulary (socialpub.search.vocabulary).
                rows.append(dict(id=uuid.uuid4(), w=workspace_id, l=False, index=index, record=record_id,
                                 title=title, body=body, url=f"/api/v1/{index}/{record_id}"))
                vocabulary.update(text.vocabulary(title, body))
            with database.transaction() as session:
                documents.add(session, rows, pending=False)
        terms = [dict(workspace_id=workspace_id, livemode=False, term=term) for term in sorted(vocabulary)]
        with database.transaction() as session:
            session.execute(insert(SearchTerm), terms)
    finally:
        database.dispose()
    if database_url.startswith("postgresql"):
        vacuum_analyze(database_url)


def queries(words: list[str], made: list[tuple[str, str, str]], known: set[str]) -> dict[str, list[str]]:
    rng = random.Random(7)
    count = WARMUP + REQUESTS
    long_words = [word for word in words[20:] if len(word) >= 6]
    drawn: dict[str, list[str]] = {"word": [], "phrase": [], "prefix": [], "typo": []}
    for _ in range(count):
        drawn["word"].append(rng.choice(words[20:]))
        body = rng.choice(made)[2].rstrip(".").lower().split()
        at = rng.randrange(len(body) - 1)
        drawn["phrase"].append(f'"{body[at]} {body[at + 1]}"')
        drawn["prefix"].append(rng.choice(long_words)[:5] + "*")
        while True:
            word = rng.choice(long_words)
            at = rng.randrange(1, len(word) - 1)
            typo = word[:at] + rng.choice("xqzjk") + word[at + 1:]
            if typo not in known:
                break
        drawn["typo"].append(typo)
    return drawn


def measure_queries(port: int, key: str, drawn: dict[str, list[str]]) -> dict[str, list[float]]:
    headers = {"Authorization": f"Bearer {key}"}
    latencies: dict[str, list[float]] = {}
    for kind, qs in drawn.items():
        for n, q in enumerate(qs):
            path = "/api/v1/search?" + urlencode({"q": q})
            took, answer = timed_get(port, path, headers)
            body = json.loads(answer)
            total = body["pagination"]["totalItems"]
            if kind != "typo" and total == 0:
                raise BenchError(f"{kind} query {q!r} found nothing")
            if len(body["data"]) != min(20, total):
                raise BenchError(f"{q!r}: {len(body['data'])} results on the first page of {total}")
            if kind == "typo" and body["didYouMean"] is None and total == 0:
                latencies.setdefault("typo_uncorrected", []).append(took)
            if n >= WARMUP:
                latencies.setdefault(kind, []).append(took)
    return latencies


def measure_posts(ports: dict[str, int], key: str) -> dict[str, list[float]]:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    rng = random.Random(11)
    latencies: dict[str, list[float]] = {name: [] for name in ports}
    for n in range(WARMUP + POSTS):
        content = f"Bench post {n}: " + " ".join(rng.choice(("launch", "sale", "winter", "café", "story", "team",
                                                               "product", "update", "event", "news")) for _ in range(12))
        body = json.dumps({"content": content, "platforms": ["twitter"]}).encode()
        for name, port in (list(ports.items()) if n % 2 else list(ports.items())[::-1]):
            started = time.perf_counter()
            status, answer = api_bench.http_request(port, "POST", "/api/v1/posts", headers, body)
            took = (time.perf_counter() - started) * 1000
            if status != 201:
                raise BenchError(f"POST /posts ({name}) answered {status}: {answer[:500]!r}")
            if n >= WARMUP:
                latencies[name].append(took)
    return latencies


def run_backend(name: str, database_url: str, made, words, work_dir: Path) -> dict:
    env = api_env(database_url)
    print(f"[{name}] preparing the database ...", flush=True)
    workspace, key = workspace_and_key(env, "Search bench", "search bench")
    started = time.perf_counter()
    load(database_url, uuid.UUID(workspace["id"]), made)
    print(f"[{name}]   loaded {len(made):,} documents in {time.perf_counter() - started:.1f} s", flush=True)
    from socialpub.search import text

    known = {word for _index, title, body in made[:5000] for word in text.vocabulary(title, body)} | set(words)
    drawn = queries(words, made, known)
    port = free_port()
    proc, _cold, _log = api_bench.start_gunicorn(f"api-{name}", "socialpub.app:create_app()", port, env, work_dir)
    latencies = measure_queries(port, key["key"], drawn)
    results = {kind: summary(values) for kind, values in latencies.items() if kind != "typo_uncorrected"}
    results["typo_uncorrected"] = len(latencies.get("typo_uncorrected", []))
    if name == "postgresql":
        off_port = free_port()
        off, _cold, _log = api_bench.start_gunicorn(f"api-{name}-without-search", "search_off_app:create_app()",
                                                    off_port, env, work_dir, ["--chdir", str(BENCH_DIR)])
        posts = measure_posts({"with": port, "without": off_port}, key["key"])
        api_bench.PROCESSES.stop(off)
        results["posts"] = {label: summary(values) for label, values in posts.items()}
        results["post_overhead_percent"] = 100 * (results["posts"]["with"]["p50_ms"]
                                                  / results["posts"]["without"]["p50_ms"] - 1)
    api_bench.PROCESSES.stop(proc)
    for kind in ("word", "phrase", "prefix", "typo"):
        numbers = results[kind]
        print(f"[{name}]   {kind:<8} p50 {numbers['p50_ms']:6.1f} ms  p95 {numbers['p95_ms']:6.1f} ms  "
              f"max {numbers['max_ms']:6.1f} ms", flush=True)
    return results


def run(work_dir: Path) -> dict:
    only = os.environ.get("SEARCH_BENCH_BACKENDS", "postgresql,sqlite").split(",")
    results: dict = {}
    words = made_up_words(random.Random(1))
    made = documents(words)
    if "postgresql" in only:
        recreate_database(DB_NAME)
        results["postgresql"] = run_backend("postgresql", PG_URL, made, words, work_dir)
    if "sqlite" in only:
        results["sqlite"] = run_backend("sqlite", f"sqlite:///{work_dir / 'search.db'}", made, words, work_dir)
    return results


def report(results: dict) -> None:
    print(f"\nsearch over {DOCUMENTS:,} documents (GET /search, every index with counts)")
    for backend, numbers in results.items():
        for name, target in TARGETS[backend].items():
            kind = name.split("_")[0]
            value = numbers[kind]["p95_ms"]
            print(f"  {backend + ' ' + kind + ' p95':<38} {value:8.2f} ms  target < {target:g} ms  "
                  f"{verdict(value < target)}")
    if "postgresql" in results:
        pg = results["postgresql"]
        value, target = pg["post_overhead_percent"], TARGETS["post_overhead_percent"]
        print(f"  {'POST /posts p50, with search':<38} {pg['posts']['with']['p50_ms']:8.2f} ms")
        print(f"  {'POST /posts p50, without search':<38} {pg['posts']['without']['p50_ms']:8.2f} ms")
        print(f"  {'indexing adds to POST /posts':<38} {value:8.2f} %   target < {target:g} %   {verdict(value < target)}")


def main() -> int:
    return bench_main("search", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
