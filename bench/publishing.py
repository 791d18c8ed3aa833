"""Scheduled publishing under a burst: 10,000 posts due at the same moment, on a
platform that answers at once and on platforms that take 200-300 ms a call.

Run from the project root: `.venv/bin/python bench/publishing.py` (both scenarios;
`--scenario burst` or `--scenario latency` for one).

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth) and `redis-server` on
the PATH. It creates its own database `socialpub_pubbench_<random>` (dropped at the
end) and starts its own Redis on a free loopback port (or uses --redis-url, whose
database it flushes before and after: never point it at a shared database). All
traffic stays on the loopback interface.

Each scenario runs on a database and Redis of its own:
  burst    the workspace's one sandbox twitter account, answering at once: what the
           pipeline itself costs (target: all out within 25 s; `--posts 100000`: within
           ten times the 10,000 run's time, a cost that grows linearly);
  latency  500 sandbox accounts over 5 platforms, each call taking 250 ms on average
           (latencyMs 200 plus up to 100 of jitter), as real platforms answer in
           100-1000 ms: what keeping calls in flight buys (target: 45 s).

What it does:
  1. migrates the database, creates a business workspace (test mode publishes to the
     sandbox platform, which records every call in `sandbox_calls`) and its
     scenario's sandbox accounts;
  2. starts 2 `socialpub worker` processes (an RQ worker plus the dispatcher each);
  3. inserts 10,000 scheduled posts, each with one pending target (spread over the
     accounts in turn), all due at the same second a few seconds ahead (what a 09:00
     rush looks like);
  4. waits until every target is published (bounded), sampling each worker's RSS;
  5. measures the time from the scheduled moment until the last target went out,
     the publish lag (target.published_at - post.scheduled_at) at p50 and p99,
     duplicate deliveries at the platform, and the workers' peak RSS;
  6. says which limit bounds the run: the least time each concurrency cap (a job's,
     its slice's, per platform, per account) allows at the platforms' latency, and
     the least the CPU spent allows on this machine's CPUs.

Results are printed as a table with PASS/FAIL per target and written to
bench/publishing-results.json (one entry per scenario). The exit status is 0 when the measurement ran (targets
met or not), 2 when the set-up failed, 1 on any other failure. The whole run is
bounded (WHOLE_RUN_LIMIT_S) and always stops its processes and drops its database.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from procs import BenchError, Processes, free_port, rss_mb, verdict

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
SCENARIOS = {
    "burst": {
        "platforms": ("twitter",), "accounts_per_platform": 1, "options": {},
        "targets": {
            "all_published_s": 25.0,  # from the scheduled moment until the last target is out
            "duplicates": 0,
            "rss_mb": 200.0,  # each worker, peak
        },
    },
    "latency": {
        "platforms": ("twitter", "mastodon", "bluesky", "threads", "linkedin"), "accounts_per_platform": 100,
        "options": {"latencyMs": 200, "latencyJitterMs": 100},
        "targets": {"all_published_s": 45.0, "duplicates": 0, "rss_mb": 250.0},
    },
}
WHOLE_RUN_LIMIT_S = 420


# --------------------------------------------------------------------------- processes

PROCESSES = Processes()
CREATED_DATABASES: list[str] = []


def _on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _on_alarm(_signum, _frame):
    raise TimeoutError("the benchmark ran longer than its bound (WHOLE_RUN_LIMIT_S, or the scenarios' waits)")


def process_tree(pid: int) -> list[int]:
    """The process and its descendants."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat[stat.rfind(")") + 2:].split()[1])
    tree, frontier = [pid], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        tree.extend(children)
        frontier = children
    return tree


def cpu_seconds(pid: int) -> float:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_backends(db_name: str) -> list[int]:
    """PostgreSQL backends serving the benchmark database (their title names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"postgres:") and f" {db_name} ".encode() in title:
            found.append(int(entry.name))
    return found


def wal_position() -> dict:
    """Where the server's write-ahead log is, and how many checkpoints it has made:
    the difference over a run is the WAL it wrote (each commit waits for its share to
    be flushed; a page changed after a checkpoint is written whole, once) and the
    checkpoints its volume asked for (max_wal_size)."""
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as connection:
        lsn, timed, requested = connection.execute(
            "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, checkpoints_timed, checkpoints_req FROM pg_stat_bgwriter"
        ).fetchone()
    return {"wal_bytes": int(lsn), "checkpoints": int(timed) + int(requested)}


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# --------------------------------------------------------------------------- services

class PrivateRedis:
    def __init__(self, log_dir: Path):
        binary = shutil.which("redis-server")
        if binary is None:
            raise BenchError("redis-server is not on the PATH (or pass --redis-url)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        with open(log_dir / "redis.log", "wb") as log:
            self.process = PROCESSES.spawn(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=log, stderr=subprocess.STDOUT,
            )
        from redis import Redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                Redis.from_url(self.url, socket_connect_timeout=1).ping()
                return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.05)
        raise BenchError(f"redis-server did not start:\n{tail(log_dir / 'redis.log')}")


def create_database() -> tuple[str, str]:
    import psycopg

    name = f"socialpub_pubbench_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return name, f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def prepare_workspace(database, scenario: dict) -> tuple[uuid.UUID, list[tuple[uuid.UUID, str]]]:
    """A business workspace and the scenario's test-mode sandbox accounts (the
    workspace's own on each platform, and more beside it), as (id, platform)."""
    from sqlalchemy import select

    from persistence.accounts import ConnectedAccount
    from socialpub.workspaces import service as workspaces

    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Publishing bench", plan="business")
        by_platform = {}
        for platform in scenario["platforms"]:
            own = session.execute(
                select(ConnectedAccount).where(
                    ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.livemode.is_(False),
                    ConnectedAccount.platform == platform, ConnectedAccount.connector == "sandbox",
                )
            ).scalar_one()
            own.options = dict(scenario["options"])
            by_platform[platform] = [own]
            for number in range(1, scenario["accounts_per_platform"]):
                account = ConnectedAccount(
                    workspace_id=workspace.id, livemode=False, platform=platform, connector="sandbox",
                    handle=f"@bench-{platform}-{number}", status="active", options=dict(scenario["options"]),
                )
                session.add(account)
                by_platform[platform].append(account)
        session.flush()
        # The platforms in turn: a rush goes out to all of them at once (the dispatcher
        # claims in the order the posts were written, and a slice of one platform
        # would meet publish_concurrency_per_platform).
        return workspace.id, [
            (account.id, account.platform) for accounts in zip(*by_platform.values()) for account in accounts
        ]


def insert_scheduled_posts(database, workspace_id, accounts: list[tuple[uuid.UUID, str]], count: int,
                           due: dt.datetime) -> None:
    """What `create_post` leaves behind for a scheduled test-mode post on one platform
    (a post and its pending target), inserted in bulk, the posts spread over the
    accounts in turn."""
    from sqlalchemy import insert

    from persistence.posts import Post, PostTarget

    from socialpub.areas import import_models


    import_models()  # every table, so foreign keys to workspaces resolve
    from persistence.types import utcnow

    now = utcnow()
    common = dict(workspace_id=workspace_id, livemode=False, created_at=now, updated_at=now)
    posts, targets = [], []
    for number in range(count):
        post_id = uuid.uuid4()
        account_id, platform = accounts[number % len(accounts)]
        posts.append(dict(common, id=post_id, content=f"Benchmark post {number}: our autumn collection is live.",
                          platforms=[platform], status="scheduled", scheduled_at=due))
        targets.append(dict(common, id=uuid.uuid4(), post_id=post_id, account_id=account_id, platform=platform,
                            status="pending", attempts=0, comment_attempts=0, next_attempt_at=due))
    with database.transaction() as session:
        # The posts in multi-row VALUES statements, 2,000 rows each (as a bulk writer
        # would): a statement a row would write the workspace's post counter once a
        # row. Targets have no counter: the driver's faster statement a row.
        for start in range(0, count, 2000):
            session.execute(insert(Post).values(posts[start:start + 2000]))
            session.execute(insert(PostTarget), targets[start:start + 2000])


def published_count(database, expected: int) -> int:
    """How many targets are published, counted from those that are not (the index
    holds them apart): polled while the run goes on, its cost must not grow with what
    was published, or the bench's own reads would weigh on a larger run."""
    from sqlalchemy import func, select

    from persistence.posts import PostTarget, TargetStatus

    unpublished = [status for status in TargetStatus if status != TargetStatus.PUBLISHED]
    with database.transaction() as session:
        return expected - session.execute(
            select(func.count()).select_from(PostTarget).where(PostTarget.status.in_(unpublished))
        ).scalar_one()


def start_worker(number: int, env: dict, log_dir: Path) -> subprocess.Popen:
    with open(log_dir / f"worker-{number}.log", "wb") as log:
        return PROCESSES.spawn([str(VENV_BIN / "socialpub"), "worker"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_for_workers(redis_url: str, workers: list[subprocess.Popen], log_dir: Path, timeout: float = 30) -> None:
    from redis import Redis
    from rq import Worker

    connection = Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for number, proc in enumerate(workers):
            if proc.poll() is not None:
                raise BenchError(f"worker {number} exited with {proc.returncode}:\n{tail(log_dir / f'worker-{number}.log')}")
        if Worker.count(connection=connection) >= len(workers):
            return
        time.sleep(0.1)
    raise BenchError(f"the workers did not register with Redis within {timeout:.0f} s")


# --------------------------------------------------------------------------- measuring

def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def outcome(database, due: dt.datetime, expected: int) -> dict:
    from sqlalchemy import func, select

    from persistence.sandbox import SandboxCall
    from persistence.posts import Post, PostTarget
    from socialpub.areas import import_models

    import_models()  # every table, so foreign keys to workspaces resolve

    with database.transaction() as session:
        rows = session.execute(
            select(PostTarget.published_at, Post.scheduled_at, PostTarget.attempts)
            .join(Post, Post.id == PostTarget.post_id)
            .where(PostTarget.status == "published")
        ).all()
        statuses = dict(session.execute(select(PostTarget.status, func.count()).group_by(PostTarget.status)).all())
        posts_published = session.execute(
            select(func.count()).select_from(Post).where(Post.status == "published")
        ).scalar_one()
        accepted = session.execute(
            select(func.count()).select_from(SandboxCall).where(SandboxCall.outcome == "accepted", SandboxCall.kind == "post")
        ).scalar_one()
        calls = session.execute(select(func.count()).select_from(SandboxCall).where(SandboxCall.kind == "post")).scalar_one()
        keys_called_twice = session.execute(
            select(func.count()).select_from(
                select(SandboxCall.idempotency_key).where(SandboxCall.kind == "post")
                .group_by(SandboxCall.idempotency_key).having(func.count() > 1).subquery()
            )
        ).scalar_one()
        # The sandbox answers a repeat of a key it accepted with the first receipt, and
        # records it as a `repeated` call: what a platform without idempotency keys
        # would have published a second time.
        keys_sent_again = session.execute(
            select(func.count(func.distinct(SandboxCall.idempotency_key))).where(
                SandboxCall.kind == "post", SandboxCall.outcome == "repeated"
            )
        ).scalar_one()
    lags = [(published - scheduled).total_seconds() for published, scheduled, _ in rows]
    last = max((published for published, _, _ in rows), default=None)
    return {
        "targets_published": len(rows),
        "targets_by_status": statuses,
        "posts_published": posts_published,
        "all_published_s": (last - due).total_seconds() if last is not None and len(rows) == expected else None,
        "last_published_after_s": (last - due).total_seconds() if last is not None else None,
        "lag_p50_s": percentile(lags, 50),
        "lag_p99_s": percentile(lags, 99),
        "lag_max_s": max(lags) if lags else None,
        "platform_calls": calls,
        "accepted_deliveries": accepted,
        # Targets sent again after the platform accepted them: a duplicate post on a
        # platform without idempotency keys (nothing is killed here: anything but 0 is a bug).
        "duplicates": keys_sent_again,
        # Accepted by the platform, not (yet) recorded on the target: 0 once the run
        # is complete; a run stopped at its time limit may leave a few in flight.
        "accepted_not_recorded": max(accepted - len(rows), 0),
        "keys_called_more_than_once": keys_called_twice,
        "targets_with_retries": sum(1 for _, _, attempts in rows if attempts > 1),
    }


def bounds(results: dict) -> dict:
    """The least time each limit allows the run, from the settings and what the run
    measured: the calls a worker keeps in flight (a job's concurrency, but no more
    than its slice holds, and its per-account and per-platform caps over the
    scenario's accounts and platforms) against the platforms' mean latency, and the
    CPU the workers and PostgreSQL spent against the machine's CPUs. The largest is
    the limit that bounds the run; the measured time over it says how close the run
    came to that limit."""
    caps = results["publish_concurrency"]
    workers, targets = results["workers"], results["posts"]
    options = results["account_options"]
    latency_s = ((options.get("latencyMs") or 0) + (options.get("latencyJitterMs") or 0) / 2) / 1000
    per_worker = {
        "job concurrency (SOCIALPUB_PUBLISH_CONCURRENCY)": caps["slice"],
        "slice size (SOCIALPUB_PUBLISH_SLICE_SIZE)": caps["slice_size"],
        "per-platform cap (SOCIALPUB_PUBLISH_CONCURRENCY_PER_PLATFORM)": caps["per_platform"] * len(results["platforms"]),
        "per-account cap (SOCIALPUB_PUBLISH_CONCURRENCY_PER_ACCOUNT)": caps["per_account"] * results["accounts"],
    }
    least = {name: targets * latency_s / (workers * calls) for name, calls in per_worker.items()}
    cpu = results["cpu_seconds"]
    spent = sum(cpu["workers"].values()) + cpu["postgres"]
    least["CPU (workers and PostgreSQL over the machine's CPUs)"] = spent / (results["machine"]["cpus"] or 1)
    bound = max(least, key=least.get)
    measured = results["outcome"]["last_published_after_s"]
    return {"least_s": {name: round(value, 2) for name, value in least.items()}, "bound_by": bound,
            "measured_over_bound": round(measured / least[bound], 2) if measured and least[bound] else None,
            "mean_latency_s": latency_s, "cpu_ms_per_target": round(spent * 1000 / targets, 2)}


def build_checks(results: dict) -> list[dict]:
    out = results["outcome"]
    checks = []
    targets = results["targets"]

    def add(name, value, shown, target, ok):
        checks.append({"check": name, "value": value, "shown": shown, "target": target, "result": verdict(ok)})

    total = out["all_published_s"]
    add("all published after the scheduled time", total,
        f"{total:.1f} s" if total is not None else f"not all ({out['targets_published']}/{results['posts']})",
        f"< {targets['all_published_s']:.0f} s", total is not None and total < targets["all_published_s"])
    add("every post published", out["posts_published"], f"{out['posts_published']}/{results['posts']}",
        f"= {results['posts']}", out["posts_published"] == results["posts"])
    add("duplicate deliveries", out["duplicates"], str(out["duplicates"]), "= 0", out["duplicates"] == targets["duplicates"])
    for name, peak in results["worker_rss_peak_mb"].items():
        add(f"RSS {name} (peak)", peak, f"{peak:.0f} MB" if peak is not None else "n/a",
            f"< {targets['rss_mb']:.0f} MB", peak is not None and peak < targets["rss_mb"])
    return checks


def print_report(results: dict) -> None:
    out = results["outcome"]

    def seconds(value):
        return f"{value:.2f} s" if value is not None else "n/a"

    print()
    print(f"Scheduled publishing ({results['scenario']}): {results['posts']:,} posts due at one moment, "
          f"{results['workers']} `socialpub worker` processes, PostgreSQL + RQ, sandbox platform")
    print(f"  {results['accounts']} sandbox accounts on {', '.join(results['platforms'])}, options "
          f"{json.dumps(results['account_options'])}; publish concurrency {results['publish_concurrency']}")
    machine = results["machine"]
    print(f"  machine: {machine['cpus']} CPUs, Python {machine['python']}, load average before the run "
          f"{' '.join(str(value) for value in machine['load_before'])}")
    partial = "" if out["targets_published"] == results["posts"] else (
        f"  (of the {out['targets_published']:,} published when the wait ended)")
    print(f"  publish lag p50 {seconds(out['lag_p50_s'])}, p99 {seconds(out['lag_p99_s'])}, "
          f"max {seconds(out['lag_max_s'])}{partial}")
    print(f"  throughput {results['throughput_per_s'] or 0:.0f} targets/s; platform calls {out['platform_calls']:,}, "
          f"accepted {out['accepted_deliveries']:,}, keys called more than once {out['keys_called_more_than_once']}")
    cpu = results["cpu_seconds"]
    print(f"  CPU during the run: workers {', '.join(f'{v:.1f} s' for v in cpu['workers'].values())}; "
          f"PostgreSQL backends {cpu['postgres']:.1f} s; wall {results['run_wall_s']:.1f} s")
    wal = results["wal"]
    print(f"  PostgreSQL wrote {wal['written_mb']:,.0f} MB of WAL ({wal['written_mb'] * 1024 / results['posts']:.1f} kB a "
          f"target) and made {wal['checkpoints']} checkpoints during the run")
    limits = results["bounds"]
    print(f"  what bounds the run (least time each limit allows; CPU {limits['cpu_ms_per_target']:.2f} ms a target, "
          f"platform latency {limits['mean_latency_s'] * 1000:.0f} ms):")
    for name, least in sorted(limits["least_s"].items(), key=lambda item: -item[1]):
        print(f"    {least:8.2f} s  {name}{'   <- bounds the run' if name == limits['bound_by'] else ''}")
    if limits["measured_over_bound"] is not None:
        print(f"  the run took {limits['measured_over_bound']:.2f}x the least time of the limit that bounds it")
    print()
    width = max(len(c["check"]) for c in results["checks"]) + 2
    print(f"  {'check':<{width}}{'value':>22}  {'target':>10}  result")
    for check in results["checks"]:
        print(f"  {check['check']:<{width}}{check['shown']:>22}  {check['target']:>10}  {check['result']}")
    print()


# --------------------------------------------------------------------------- the run

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lead", type=float, default=8.0, help="seconds from now until the posts fall due")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds after the due time to wait for all")
    parser.add_argument("--dispatch-interval", type=float, default=0.25, help="SOCIALPUB_DISPATCH_INTERVAL_SECONDS")
    parser.add_argument("--redis-url", help="an existing Redis database to use (flushed before and after)")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "publishing-results.json")
    parser.add_argument("--keep-logs", action="store_true")
    options = parser.parse_args()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGALRM, _on_alarm)
    names = list(SCENARIOS) if options.scenario == "all" else [options.scenario]
    # A longer wait (--timeout, for --posts 100000) extends the whole run's bound.
    signal.alarm(int(max(WHOLE_RUN_LIMIT_S, len(names) * (options.timeout + 180))))
    log_dir = Path(tempfile.mkdtemp(prefix="socialpub-pubbench-"))
    try:
        results = {}
        for name in names:
            results[name] = run(options, log_dir, name)
            drop_created_databases()
        options.output.write_text(json.dumps({"scenarios": results}, indent=2, default=str) + "\n")
        shown = options.output.relative_to(ROOT) if options.output.is_relative_to(ROOT) else options.output
        print(f"results written to {shown}")
        return 0
    except BenchError as exc:
        print(f"bench/publishing.py: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, TimeoutError) as exc:
        print(f"bench/publishing.py: stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        PROCESSES.stop_all()
        drop_created_databases()
        if options.keep_logs:
            print(f"logs kept in {log_dir}")
        else:
            shutil.rmtree(log_dir, ignore_errors=True)


def drop_created_databases() -> None:
    for name in list(CREATED_DATABASES):
        try:
            drop_database(name)
            CREATED_DATABASES.remove(name)
        except Exception as exc:  # noqa: BLE001
            print(f"bench/publishing.py: could not drop database {name}: {exc}", file=sys.stderr)


def run(options, log_dir: Path, scenario_name: str) -> dict:
    """Runs one scenario on a database and Redis of its own; returns its results."""
    from persistence.db import Database
    from socialpub.config import Settings
    from persistence.migrate import upgrade
    from persistence.types import utcnow

    try:
        db_name, database_url = create_database()
    except Exception as exc:  # noqa: BLE001
        raise BenchError(f"PostgreSQL at 127.0.0.1:5432 is unusable: {exc}") from exc
    CREATED_DATABASES.append(db_name)
    upgrade(database_url)
    database = Database(database_url)
    try:
        scenario = SCENARIOS[scenario_name]
        scenario_logs = log_dir / scenario_name
        scenario_logs.mkdir()
        workspace_id, accounts = prepare_workspace(database, scenario)
        print(f"== {scenario_name}: {len(accounts)} sandbox accounts, options {json.dumps(scenario['options'])}",
              flush=True)

        if options.redis_url:
            from redis import Redis

            redis_url = options.redis_url
            Redis.from_url(redis_url).flushdb()
        else:
            redis_url = PrivateRedis(scenario_logs).url

        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SOCIALPUB_LOG_LEVEL": "WARNING",
            "SOCIALPUB_DISPATCH_INTERVAL_SECONDS": str(options.dispatch_interval),
        }
        workers = [start_worker(number, env, scenario_logs) for number in range(options.workers)]
        wait_for_workers(redis_url, workers, scenario_logs)

        due = (utcnow() + dt.timedelta(seconds=options.lead)).replace(microsecond=0)
        started_inserting = time.monotonic()
        insert_scheduled_posts(database, workspace_id, accounts, options.posts, due)
        print(f"inserted {options.posts:,} scheduled posts in {time.monotonic() - started_inserting:.1f} s; "
              f"due at {due.isoformat()}", flush=True)
        if utcnow() >= due:
            raise BenchError("inserting the posts took longer than the lead time; raise --lead")

        load_before = [round(value, 2) for value in os.getloadavg()]
        names = [f"worker {number}" for number in range(len(workers))]
        rss_peak: dict[str, float | None] = {name: None for name in names}
        rss_samples: dict[str, list[float]] = {name: [] for name in names}
        cpu_before = {name: sum(cpu_seconds(pid) for pid in process_tree(proc.pid)) for name, proc in zip(names, workers)}
        pg_before = {pid: cpu_seconds(pid) for pid in database_backends(db_name)}
        wal_before = wal_position()
        wall_start = time.monotonic()
        deadline_at = due + dt.timedelta(seconds=options.timeout)
        published = 0
        last_print = last_count = 0.0
        while utcnow() < deadline_at:
            for name, proc in zip(names, workers):
                if proc.poll() is not None:
                    raise BenchError(
                        f"{name} exited with {proc.returncode}:\n{tail(scenario_logs / (name.replace(' ', '-') + '.log'))}"
                    )
                values = [rss_mb(pid) for pid in process_tree(proc.pid)]
                total = sum(value for value in values if value is not None)
                rss_samples[name].append(total)
                rss_peak[name] = max(rss_peak[name] or 0.0, total)
            if utcnow() >= due and time.monotonic() - last_count >= 1.0:
                last_count = time.monotonic()
                published = published_count(database, options.posts)
                if published >= options.posts:
                    break
                if time.monotonic() - last_print >= 5:
                    print(f"  {(utcnow() - due).total_seconds():5.1f} s after due: {published:,} published", flush=True)
                    last_print = time.monotonic()
            time.sleep(0.25)
        run_wall = time.monotonic() - wall_start
        cpu_after = {name: sum(cpu_seconds(pid) for pid in process_tree(proc.pid)) for name, proc in zip(names, workers)}
        pg_after = {pid: cpu_seconds(pid) for pid in database_backends(db_name)}
        wal_after = wal_position()
        # Stopped before counting, so that nothing changes while it is counted.
        for proc in workers:
            PROCESSES.stop(proc)

        out = outcome(database, due, options.posts)
        worker_settings = Settings.from_env()  # what the workers read from the same environment
        results = {
            "benchmark": "scheduled publishing burst",
            "scenario": scenario_name,
            "accounts": len(accounts),
            "platforms": list(scenario["platforms"]),
            "account_options": scenario["options"],
            "publish_concurrency": {
                "slice": worker_settings.publish_concurrency,
                "per_account": worker_settings.publish_concurrency_per_account,
                "per_platform": worker_settings.publish_concurrency_per_platform,
                "slice_size": worker_settings.publish_slice_size,
            },
            "posts": options.posts,
            "workers": options.workers,
            "dispatch_interval_s": options.dispatch_interval,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": load_before},
            "due_at": due.isoformat(),
            "run_wall_s": round(run_wall, 2),
            "outcome": out,
            "throughput_per_s": (out["targets_published"] / out["last_published_after_s"])
            if out["last_published_after_s"] else None,
            "worker_rss_peak_mb": {name: (round(v, 1) if v is not None else None) for name, v in rss_peak.items()},
            "worker_rss_median_mb": {
                name: round(percentile(samples, 50), 1) if samples else None for name, samples in rss_samples.items()
            },
            "cpu_seconds": {
                "workers": {name: round(cpu_after[name] - cpu_before[name], 2) for name in names},
                "postgres": round(sum(pg_after.get(pid, 0.0) - pg_before.get(pid, 0.0) for pid in pg_after), 2),
            },
            "wal": {
                "written_mb": round((wal_after["wal_bytes"] - wal_before["wal_bytes"]) / 2**20, 1),
                "checkpoints": wal_after["checkpoints"] - wal_before["checkpoints"],
            },
            "targets": scenario["targets"],
        }
        results["bounds"] = bounds(results)
        results["checks"] = build_checks(results)
        print_report(results)
        return results
    finally:
        PROCESSES.stop_all()
        if options.redis_url:
            try:
                from redis import Redis

                Redis.from_url(options.redis_url).flushdb()
            except Exception:  # noqa: BLE001
                pass
        database.dispose()


if __name__ == "__main__":
    sys.exit(main())
