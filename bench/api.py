"""Throughput, latency, cold start and memory of the API against a minimal connexion app.

Run from the project root: `make bench ONLY=api` (or `.venv/bin/python bench/api.py`).

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth) and Redis on
127.0.0.1:6379. It uses its own database `socialpub_bench` (dropped and recreated on
every run) and Redis database 14 (flushed), never anything else. Load comes from
`wrk` when installed, else from a built-in asyncio load generator. All traffic stays
on the loopback interface.

Both servers run under gunicorn with two uvicorn workers:
  API:      socialpub.app:create_app()  (PostgreSQL + Redis, 10,000 posts loaded)
  minimal:  bench/minimal_app.py        (one GET and one POST answering constant JSON)

Results are printed as a table and written to bench/api-results.json. The exit status is
0 when the measurement ran (targets met or not), 2 when a server failed to start or
answered the wrong status, 1 on any other failure.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from procs import BenchError, Processes, free_port, rss_mb, verdict
from stages_app import STAGES

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DB_NAME = "socialpub_bench"
DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_URL = "redis://127.0.0.1:6379/14"

POSTS_TO_LOAD = 10_000
# A key may allow at most 1,000 requests per minute; the load is spread over this
# many keys of the same workspace so that no request is refused with 429 (the
# rate-limit counters are also reset before each API scenario): 50 keys carry up to
# ~4,000 requests per second over a 12 s scenario. Few enough that each key is read
# from the database only once per key-cache lifetime, as with a single busy client.
KEY_COUNT = 50
KEY_PER_MINUTE = 1000
KEY_PER_DAY = 100_000
POST_BODY = {"content": "Benchmark post: our autumn collection is live.", "platforms": ["twitter"]}

TARGETS = {
    "cold_start_s": 2.0,  # below
    "rss_mb": 150.0,  # below, each API worker
    # At least, API / minimal requests per second (both against the minimal app's GET
    # or POST); the stretch goals are printed beside them.
    "ratio": {"GET list": 0.35, "POST": 0.3, "GET one": 0.45},
    "stretch_ratio": {"GET list": 0.6, "POST": 0.4},
    "p99_ms": 100.0,  # below, each API scenario at the benchmark's connections
}
# API scenario -> the minimal app's scenario it is compared with.
BASELINE_OF = {"api GET list": "minimal GET", "api POST": "minimal POST", "api GET one": "minimal GET"}
WHOLE_RUN_LIMIT_S = 480
STAGE_SECONDS = 5.0  # measured load per scenario of the stage breakdown


# --------------------------------------------------------------------------- processes

PROCESSES = Processes()


def _on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _on_alarm(_signum, _frame):
    raise TimeoutError(f"the benchmark ran longer than {WHOLE_RUN_LIMIT_S} s")


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces.
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return sorted(found)


def cpu_ticks(pid: int) -> int:
    """User + system CPU of a process, in clock ticks (0 once it has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])
    return total - idle, total


def database_backends() -> list[int]:
    """PostgreSQL backends serving the benchmark database (their title names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"postgres:") and f" {DB_NAME} ".encode() in title:
            found.append(int(entry.name))
    return found


def redis_servers() -> list[int]:
    """The Redis server processes (the benchmark's counters live in one of them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "redis-server":
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class CpuMeter:
    """CPU used during a scenario by the server's workers, by the benchmark
    database's PostgreSQL backends, by Redis, and by the whole machine."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, server_pid: int):
        self.server_pid = server_pid

    def _snapshot(self) -> dict:
        workers = children_of(self.server_pid)
        backends = database_backends()
        return {
            "workers": {pid: cpu_ticks(pid) for pid in workers},
            "backends": {pid: cpu_ticks(pid) for pid in backends},
            "redis": {pid: cpu_ticks(pid) for pid in redis_servers()},
            "machine": machine_ticks(),
        }

    def __enter__(self):
        self.before = self._snapshot()
        return self

    def __exit__(self, *_exc):
        self.after = self._snapshot()

    def report(self, requests: int) -> dict:
        def used(group):
            before, after = self.before[group], self.after[group]
            # Backends that came and went during the scenario are not counted.
            return sum(max(0, ticks - before.get(pid, 0)) for pid, ticks in after.items()) / self.TICK

        busy = self.after["machine"][0] - self.before["machine"][0]
        total = self.after["machine"][1] - self.before["machine"][1]
        per_request = 1000 / requests if requests else 0.0
        workers, postgres, redis = (used(group) * per_request for group in ("workers", "backends", "redis"))
        return {
            "worker_cpu_ms_per_request": round(workers, 3),
            "postgres_cpu_ms_per_request": round(postgres, 3),
            "redis_cpu_ms_per_request": round(redis, 3),
            "total_cpu_ms_per_request": round(workers + postgres + redis, 3),
            "machine_busy_pct": round(100 * busy / total, 1) if total else 0.0,
        }


def background_load(seconds: float = 1.0) -> float:
    """How busy the machine is (percent of all CPUs) before any load is sent."""
    busy0, total0 = machine_ticks()
    time.sleep(seconds)
    busy1, total1 = machine_ticks()
    return round(100 * (busy1 - busy0) / max(1, total1 - total0), 1)


# --------------------------------------------------------------------------- setup

def run_cli(args: list[str], env: dict, timeout: float = 60) -> dict:
    done = subprocess.run(
        [str(VENV_BIN / "socialpub"), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise BenchError(f"socialpub {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def recreate_database() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def flush_redis() -> None:
    from redis import Redis

    client = Redis.from_url(REDIS_URL, socket_connect_timeout=5, socket_timeout=5)
    try:
        client.flushdb()
    finally:
        client.close()


def create_extra_keys(workspace_id: uuid.UUID, count: int) -> list[str]:
    from persistence.db import Database
    from socialpub.scopes import ALL_SCOPES
    from socialpub.keys import service as api_keys
    from socialpub.tenancy import Actor

    database = Database(DATABASE_URL)
    values = []
    try:
        with database.transaction() as session:
            for n in range(count):
                _key, value = api_keys.create_api_key(
                    session=session, actor=Actor.operator("bench"),
                    workspace_id=workspace_id,
                    name=f"bench {n + 2}",
                    scopes=list(ALL_SCOPES),
                    mode="test",
                    per_minute=KEY_PER_MINUTE,
                    per_day=KEY_PER_DAY,
                )
                values.append(value)
    finally:
        database.engine.dispose()
    return values


def load_posts(workspace_id: uuid.UUID, count: int) -> None:
    from sqlalchemy import insert

    from persistence.db import Database
    from persistence.posts import Post
    from socialpub.areas import import_models

    import_models()  # every table, so foreign keys to workspaces resolve

    database = Database(DATABASE_URL)
    now = dt.datetime.now(dt.timezone.utc)
    rows = []
    for n in range(count):
        created = now - dt.timedelta(seconds=count - n)
        rows.append(
            dict(
                id=uuid.uuid4(),
                workspace_id=workspace_id,
                livemode=False,
                content=f"Post number {n}: our autumn collection is live.",
                platforms=["twitter"] if n % 3 else ["twitter", "linkedin"],
                status="draft",
                created_at=created,
                updated_at=created,
            )
        )
    try:
        with database.transaction() as session:
            for start in range(0, count, 2000):
                session.execute(insert(Post), rows[start:start + 2000])
    finally:
        database.engine.dispose()
    # What autovacuum would have done shortly after such a load: planner statistics
    # and the visibility map, so that queries are planned as in a settled database.
    import psycopg

    with psycopg.connect(DATABASE_URL.replace("+psycopg", ""), autocommit=True, connect_timeout=5) as conn:
        conn.execute("VACUUM ANALYZE")


# --------------------------------------------------------------------------- servers

def http_request(port: int, method: str, path: str, headers: dict | None = None, body: bytes | None = None,
                 timeout: float = 5.0) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def start_gunicorn(name: str, app: str, port: int, env: dict, log_dir: Path, extra: list[str] | None = None):
    """Spawns gunicorn and waits for the first 200 from /healthz. Returns the process,
    the cold start in seconds and the log path."""
    log_path = log_dir / f"{name}.log"
    log = open(log_path, "wb")
    args = [
        str(VENV_BIN / "gunicorn"),
        "-k", "socialpub.server.Worker",  # the documented production worker, for both apps
        "-w", "2",
        "-b", f"127.0.0.1:{port}",
        "--graceful-timeout", "5",
        *(extra or []),
        app,
    ]
    started = time.perf_counter()
    proc = PROCESSES.spawn(args, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = started + 30
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{name} server exited with {proc.returncode}:\n{tail(log_path)}")
        try:
            status, _ = http_request(port, "GET", "/healthz", timeout=1)
            if status == 200:
                return proc, time.perf_counter() - started, log_path
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.01)
    raise BenchError(f"{name} server did not answer /healthz within 30 s:\n{tail(log_path)}")


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def first_post_id(port: int, headers: dict) -> str:
    status, payload = http_request(port, "GET", "/api/v1/posts?limit=1", headers=headers, timeout=10)
    if status != 200:
        raise BenchError(f"GET /api/v1/posts?limit=1 answered {status}: {payload[:500]!r}")
    return json.loads(payload)["data"][0]["id"]


def check_once(name: str, port: int, method: str, path: str, expected: int, headers: dict, body: bytes | None) -> float:
    """One request that must answer the expected status; returns its duration in seconds."""
    started = time.perf_counter()
    status, payload = http_request(port, method, path, headers=headers, body=body, timeout=10)
    elapsed = time.perf_counter() - started
    if status != expected:
        raise BenchError(f"{name}: {method} {path} answered {status}, expected {expected}: {payload[:500]!r}")
    return elapsed


# --------------------------------------------------------------------------- load

def run_wrk(port: int, method: str, path: str, body_file: Path | None, keys_file: Path | None,
            duration: float, threads: int, connections: int) -> dict:
    args = [
        "wrk", "-t", str(threads), "-c", str(connections), "-d", f"{duration:g}s", "--timeout", "5s",
        "-s", str(BENCH_DIR / "wrk_request.lua"), f"http://127.0.0.1:{port}",
        "--", method, path, str(body_file) if body_file else "-", str(keys_file) if keys_file else "-",
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=duration + 30)
    line = next((l for l in done.stdout.splitlines() if l.startswith("WRKJSON ")), None)
    if done.returncode != 0 or line is None:
        raise BenchError(f"wrk failed ({done.returncode}): {done.stderr.strip()} {done.stdout.strip()[-1000:]}")
    raw = json.loads(line[len("WRKJSON "):])
    errors = raw["errors"]
    seconds = raw["duration_us"] / 1e6
    return {
        "requests": raw["requests"],
        "seconds": round(seconds, 3),
        "rps": raw["requests"] / seconds if seconds else 0.0,
        "p50_ms": raw["latency_us"]["p50"] / 1000,
        "p90_ms": raw["latency_us"]["p90"] / 1000,
        "p99_ms": raw["latency_us"]["p99"] / 1000,
        "max_ms": raw["latency_us"]["max"] / 1000,
        "statuses": {str(k): v for k, v in sorted(raw["statuses"].items())},
        "socket_errors": {k: errors[k] for k in ("connect", "read", "write", "timeout")},
    }


async def _async_load(port: int, method: str, path: str, body: bytes | None, keys: list[str] | None,
                      duration: float, connections: int) -> dict:
    """Keep-alive HTTP/1.1 clients on raw asyncio streams, for machines without wrk."""
    base = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if body is not None:
        base += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    prepared = []
    for key in keys or [None]:
        lines = base + ([f"Authorization: Bearer {key}"] if key else [])
        prepared.append(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    socket_errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    stop_at = time.perf_counter() + duration

    async def client(offset: int):
        index = offset
        reader = writer = None
        while time.perf_counter() < stop_at:
            if writer is None:
                try:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    socket_errors["connect"] += 1
                    await asyncio.sleep(0.05)
                    continue
            request = prepared[index % len(prepared)]
            index += 1
            started = time.perf_counter()
            try:
                writer.write(request)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                status_line, *header_lines = head.decode("latin-1").split("\r\n")
                status = status_line.split(" ", 2)[1]
                headers = {}
                for line in header_lines:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                if "content-length" in headers:
                    await reader.readexactly(int(headers["content-length"]))
                elif headers.get("transfer-encoding", "").lower() == "chunked":
                    while True:
                        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                        await reader.readexactly(size + 2)
                        if size == 0:
                            break
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                if headers.get("connection", "").lower() == "close":
                    writer.close()
                    writer = None
            except asyncio.TimeoutError:
                socket_errors["timeout"] += 1
                writer.close()
                writer = None
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
                socket_errors["read"] += 1
                if writer is not None:
                    writer.close()
                writer = None
        if writer is not None:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(n * 7919) for n in range(connections)))
    seconds = time.perf_counter() - started
    ordered = sorted(latencies)

    def pct(p):
        return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] * 1000 if ordered else 0.0

    return {
        "requests": len(ordered),
        "seconds": round(seconds, 3),
        "rps": len(ordered) / seconds if seconds else 0.0,
        "p50_ms": pct(50),
        "p90_ms": pct(90),
        "p99_ms": pct(99),
        "max_ms": ordered[-1] * 1000 if ordered else 0.0,
        "statuses": dict(sorted(statuses.items())),
        "socket_errors": socket_errors,
    }


def run_async_load(port, method, path, body_file, keys_file, duration, connections) -> dict:
    body = body_file.read_bytes() if body_file else None
    keys = keys_file.read_text().split() if keys_file else None
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    return runner(_async_load(port, method, path, body, keys, duration, connections))


def measure(name, server, port, method, path, body_path, keys_file, expected, loader, options, warmup, duration):
    """One scenario: warm-up load, then measured load with the server's CPU."""
    if keys_file:
        flush_redis()  # fresh rate-limit windows for every API scenario
    print(f"load: {name} {path} ...", flush=True)
    for seconds, measured in ((warmup, False), (duration, True)):
        if seconds <= 0:
            continue
        with CpuMeter(server.pid) as meter:
            if loader == "wrk":
                row = run_wrk(port, method, path, body_path, keys_file, seconds, options.threads, options.connections)
            else:
                row = run_async_load(port, method, path, body_path, keys_file, seconds, options.connections)
        if measured:
            row.update(meter.report(row["requests"]))
    row["expected_status"] = int(expected)
    row["non_2xx"] = sum(n for status, n in row["statuses"].items() if status != expected) + sum(
        row["socket_errors"].values()
    )
    return row


def measure_stages(stages, api_scenarios, env, loader, options, work_dir) -> dict:
    """The API again, once per stage with that stage switched off (bench/stages_app.py),
    under the same load: what the stage costs is the difference in CPU per request."""
    rows: dict = {}
    for stage in stages:
        if stage not in STAGES:
            raise BenchError(f"unknown stage {stage!r} (stages: {', '.join(STAGES)})")
        port = free_port()
        print(f"starting the API without {stage} on :{port} ...", flush=True)
        proc, _cold, log = start_gunicorn(
            f"api-without-{stage}", "stages_app:create_app()", port, {**env, "SOCIALPUB_BENCH_STAGES_OFF": stage},
            work_dir, ["--chdir", str(BENCH_DIR)],
        )
        for name, _port, method, path, body_path, keys_file, expected in api_scenarios:
            row = measure(f"{name} without {stage}", proc, port, method, path, body_path, keys_file, expected, loader,
                          options, 1.0, STAGE_SECONDS)
            if row["requests"] and row["non_2xx"] == row["requests"]:
                raise BenchError(f"{name} without {stage}: every response was an error:\n{tail(log)}")
            rows.setdefault(name, {})[stage] = row
        PROCESSES.stop(proc)
    return rows


def print_breakdown(results: dict) -> None:
    breakdown = results["stages"]
    if not breakdown:
        return
    print()
    print("Stage breakdown: CPU of the API's workers per request (ms), whole path and with one stage off;")
    print("a stage costs the difference. pg: PostgreSQL's CPU per request with that stage off.")
    for scenario, stages in breakdown.items():
        whole = results["load"][scenario]
        print()
        header = f"{scenario:<26}{'cpu ms/req':>12}{'stage ms':>10}{'share':>8}{'pg ms/req':>11}{'req/s':>8}"
        print(header)
        print("-" * len(header))
        base = whole["worker_cpu_ms_per_request"]
        print(f"{'whole path':<26}{base:>12.2f}{'':>10}{'':>8}{whole['postgres_cpu_ms_per_request']:>11.2f}"
              f"{whole['rps']:>8.0f}")
        for stage, row in stages.items():
            cost = base - row["worker_cpu_ms_per_request"]
            print(f"{'without ' + stage:<26}{row['worker_cpu_ms_per_request']:>12.2f}{cost:>10.2f}"
                  f"{100 * cost / base if base else 0:>7.0f}%{row['postgres_cpu_ms_per_request']:>11.2f}{row['rps']:>8.0f}")


# --------------------------------------------------------------------------- report

def print_report(results: dict) -> None:
    load = results["load"]
    print()
    print(f"socialpub benchmark  ({results['load_tool']}, {results['connections']} connections, "
          f"{results['duration_s']:g} s per scenario after {results['warmup_s']:g} s warm-up, "
          f"{results['cpus']} CPUs)")
    print()
    header = (f"{'scenario':<18}{'req/s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'requests':>10}"
              f"{'cpu ms/req':>12}{'pg ms/req':>11}{'redis':>7}{'total':>7}{'busy %':>8}  statuses")
    print(header)
    print("-" * len(header) + "-" * 14)
    for name, row in load.items():
        statuses = " ".join(f"{k}:{v}" for k, v in row["statuses"].items())
        socket_errors = sum(row["socket_errors"].values())
        if socket_errors:
            statuses += f"  socket errors:{socket_errors}"
        print(f"{name:<18}{row['rps']:>9.0f}{row['p50_ms']:>9.1f}{row['p90_ms']:>9.1f}{row['p99_ms']:>9.1f}"
              f"{row['requests']:>10}{row['worker_cpu_ms_per_request']:>12.2f}"
              f"{row['postgres_cpu_ms_per_request']:>11.2f}{row['redis_cpu_ms_per_request']:>7.2f}"
              f"{row['total_cpu_ms_per_request']:>7.2f}{row['machine_busy_pct']:>8.0f}  {statuses}")
    print()
    print("cpu ms/req: CPU of the server's workers per request; pg ms/req: CPU of the PostgreSQL backends")
    print("of the benchmark database per request; redis: of the Redis server; total: the three together;")
    print(f"busy %: whole machine during the scenario "
          f"({results['machine_busy_before_load_pct']:.0f}% before any load).")
    print()
    checks = results["checks"]
    print(f"{'check':<38}{'value':>12}{'target':>12}  result")
    print("-" * 70)
    for check in checks:
        print(f"{check['name']:<38}{check['value']:>12}{check['target']:>12}  {check['result']}")
    bad = {name: row["non_2xx"] for name, row in load.items() if row["non_2xx"]}
    if bad:
        print()
        print("WARNING: unexpected responses (the numbers above include them): "
              + ", ".join(f"{name}: {n}" for name, n in bad.items()))
    print()
    print(f"Results written to {results['results_file']}")


def build_checks(results: dict) -> list[dict]:
    load = results["load"]
    checks = []

    def add(name, value, fmt, target, ok):
        checks.append({"name": name, "value": fmt.format(value), "target": target, "result": verdict(ok), "ok": ok,
                       "raw": value})

    for name in ("api", "minimal"):
        cold = results["cold_start_s"][name]
        add(f"cold start {name} (s)", cold, "{:.2f}", f"< {TARGETS['cold_start_s']:g}", cold < TARGETS["cold_start_s"])
    for n, value in enumerate(results["rss_mb"]["api_workers"]):
        add(f"RSS api worker {n + 1} (MB)", value, "{:.1f}", f"< {TARGETS['rss_mb']:g}", value < TARGETS["rss_mb"])
    for scenario, baseline in BASELINE_OF.items():
        name = scenario.removeprefix("api ")
        api, minimal = load[scenario]["rps"], load[baseline]["rps"]
        ratio = api / minimal if minimal else 0.0
        results["ratios"][name] = round(ratio, 3)
        target = TARGETS["ratio"][name]
        add(f"{name} req/s ratio api/minimal", ratio, "{:.2f}", f">= {target:g}", ratio >= target)
        stretch = TARGETS["stretch_ratio"].get(name)
        if stretch:
            add(f"{name} ratio, stretch", ratio, "{:.2f}", f">= {stretch:g}", ratio >= stretch)
        p99 = load[scenario]["p99_ms"]
        add(f"{name} p99 (ms)", p99, "{:.1f}", f"< {TARGETS['p99_ms']:g}", p99 < TARGETS["p99_ms"])
    for name, row in load.items():
        add(f"non-2xx responses, {name}", row["non_2xx"], "{}", "0", row["non_2xx"] == 0)
    return checks


# --------------------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of measured load per scenario")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of unmeasured load before each scenario")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--loader", choices=("auto", "wrk", "asyncio"), default="auto")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "api-results.json")
    parser.add_argument("--stages", default=",".join(STAGES),
                        help="stages of the request path to measure by switching each off ('' for none): "
                             + ", ".join(STAGES))
    parser.add_argument("--keep-servers", type=float, default=0,
                        help="keep both servers up this many seconds after the load (for a profiler)")
    options = parser.parse_args()

    loader = options.loader
    if loader == "auto":
        loader = "wrk" if shutil.which("wrk") else "asyncio"
    if loader == "wrk" and not shutil.which("wrk"):
        print("wrk is not installed (apt-get install -y wrk)", file=sys.stderr)
        return 1

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(int(WHOLE_RUN_LIMIT_S + options.keep_servers))

    work_dir = Path(tempfile.mkdtemp(prefix="socialpub-bench-"))
    try:
        return run(options, loader, work_dir)
    except BenchError as exc:
        print(f"\nbenchmark failed: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"\ninterrupted ({exc}); stopping the servers", file=sys.stderr)
        return 130
    finally:
        signal.alarm(0)
        PROCESSES.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)


def run(options, loader: str, work_dir: Path) -> int:
    t0 = time.perf_counter()
    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=REDIS_URL,
        SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE="10000000",
        SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE="10000000",
        SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY="100000000",
        SOCIALPUB_RATE_LIMIT_ANONYMOUS_PER_MINUTE="10000000",
        SOCIALPUB_VALIDATE_RESPONSES="false",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)

    print(f"preparing database {DB_NAME} and Redis {REDIS_URL} ...", flush=True)
    try:
        recreate_database()
        flush_redis()
    except Exception as exc:  # noqa: BLE001 - any connection failure
        raise BenchError(f"PostgreSQL or Redis is not reachable: {exc}") from exc
    run_cli(["db", "upgrade", "--json"], env, timeout=120)
    workspace = run_cli(["workspace", "create", "--name", "Benchmark workspace", "--plan", "business", "--json"], env)
    first_key = run_cli(
        ["key", "create", "--workspace", workspace["id"], "--name", "bench 1", "--all-scopes",
         "--per-minute", str(KEY_PER_MINUTE), "--per-day", str(KEY_PER_DAY), "--json"],
        env,
    )
    workspace_id = uuid.UUID(workspace["id"])
    keys = [first_key["key"], *create_extra_keys(workspace_id, KEY_COUNT - 1)]
    keys_file = work_dir / "keys.txt"
    keys_file.write_text("\n".join(keys) + "\n")
    body_file = work_dir / "post.json"
    body_file.write_text(json.dumps(POST_BODY))
    load_posts(workspace_id, POSTS_TO_LOAD)
    print(f"  {POSTS_TO_LOAD} posts and {len(keys)} keys ready in {time.perf_counter() - t0:.1f} s", flush=True)

    api_port, minimal_port = free_port(), free_port()
    print(f"starting the API on :{api_port} ...", flush=True)
    api_proc, api_cold, api_log = start_gunicorn("api", "socialpub.app:create_app()", api_port, env, work_dir)
    print(f"starting the minimal app on :{minimal_port} ...", flush=True)
    minimal_env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    minimal_env["PYTHONDONTWRITEBYTECODE"] = "1"
    minimal_proc, minimal_cold, minimal_log = start_gunicorn(
        "minimal", "minimal_app:create_app()", minimal_port, minimal_env, work_dir, ["--chdir", str(BENCH_DIR)]
    )

    idle_busy = background_load()
    if idle_busy > 15:
        print(f"WARNING: the machine is already {idle_busy:.0f}% busy before any load: other processes "
              "compete for the CPUs and lower every number below", flush=True)

    auth = {"Authorization": f"Bearer {keys[0]}"}
    json_headers = {"Content-Type": "application/json"}
    body = json.dumps(POST_BODY).encode()
    first_api_request = check_once("api", api_port, "GET", "/api/v1/posts?limit=20", 200, auth, None)
    one_post = f"/api/v1/posts/{first_post_id(api_port, auth)}"
    check_once("api", api_port, "POST", "/api/v1/posts", 201, {**auth, **json_headers}, body)
    check_once("minimal", minimal_port, "GET", "/api/v1/items?limit=20", 200, {}, None)
    check_once("minimal", minimal_port, "POST", "/api/v1/items", 201, json_headers, body)

    scenarios = [
        # name, port, method, path, body, keys, expected status
        ("minimal GET", minimal_port, "GET", "/api/v1/items?limit=20", None, None, "200"),
        ("api GET list", api_port, "GET", "/api/v1/posts?limit=20", None, keys_file, "200"),
        ("api GET one", api_port, "GET", one_post, None, keys_file, "200"),
        ("minimal POST", minimal_port, "POST", "/api/v1/items", body_file, None, "201"),
        ("api POST", api_port, "POST", "/api/v1/posts", body_file, keys_file, "201"),
    ]
    load = {}
    for name, port, method, path, body_path, scenario_keys, expected in scenarios:
        server = api_proc if port == api_port else minimal_proc
        load[name] = measure(name, server, port, method, path, body_path, scenario_keys, expected, loader, options,
                             options.warmup, options.duration)

    stages = [name.strip() for name in options.stages.split(",") if name.strip()]
    breakdown = measure_stages(stages, [row for row in scenarios if row[1] == api_port], env, loader, options, work_dir)

    api_workers = children_of(api_proc.pid)
    minimal_workers = children_of(minimal_proc.pid)
    results = {
        "generated_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_tool": loader,
        "cpus": os.cpu_count(),
        "connections": options.connections,
        "duration_s": options.duration,
        "warmup_s": options.warmup,
        "gunicorn": "-k socialpub.server.Worker -w 2",
        "posts_loaded": POSTS_TO_LOAD,
        "api_keys": len(keys),
        "machine_busy_before_load_pct": idle_busy,
        "cold_start_s": {"api": round(api_cold, 3), "minimal": round(minimal_cold, 3)},
        "first_api_request_s": round(first_api_request, 3),
        "load": load,
        "rss_mb": {
            "api_workers": [round(rss_mb(pid) or 0.0, 1) for pid in api_workers],
            "api_master": round(rss_mb(api_proc.pid) or 0.0, 1),
            "minimal_workers": [round(rss_mb(pid) or 0.0, 1) for pid in minimal_workers],
        },
        "ratios": {},
        "stages": {scenario: {stage: {k: row[k] for k in ("rps", "p99_ms", "worker_cpu_ms_per_request",
                                                             "postgres_cpu_ms_per_request", "non_2xx")}
                              for stage, row in stages.items()} for scenario, stages in breakdown.items()},
        "targets": TARGETS,
        "results_file": str(options.output),
    }
    if len(api_workers) != 2:
        raise BenchError(f"expected 2 API workers, found {len(api_workers)}:\n{tail(api_log)}")
    results["checks"] = build_checks(results)
    results["all_targets_met"] = all(check["ok"] for check in results["checks"])
    results["run_seconds"] = round(time.perf_counter() - t0, 1)
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    print_report(results)
    print_breakdown(results)
    print(f"whole run: {results['run_seconds']:.0f} s")

    if options.keep_servers > 0:
        print(f"servers kept up for {options.keep_servers:g} s: api :{api_port} (workers {api_workers}), "
              f"minimal :{minimal_port}", flush=True)
        time.sleep(options.keep_servers)

    for status_check in BASELINE_OF:
        if load[status_check]["requests"] and load[status_check]["non_2xx"] == load[status_check]["requests"]:
            raise BenchError(f"{status_check}: every response was an error:\n{tail(api_log)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
