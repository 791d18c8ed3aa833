"""Every list of the contract at 100,000 records: each paginated GET operation (but
search's two, measured by bench/search.py over 200,000 documents) answered over
100,000 records of its own in one workspace's mode, on PostgreSQL, the API under
gunicorn (2 uvicorn workers) as in production.

Run from the project root: `make bench ONLY=lists` (or `.venv/bin/python bench/lists.py`).

For each list, one record is made as the tests make it (their factories, through the
services where the tests use them), then copied 99,999 times in one statement: a
copy keeps every value but its id, its times (a second earlier per copy, so the
copies are spread in every order the lists sort by), what must be unique (a suffix
per copy) and, for a record that has parts of its own (a post's targets), those
parts, copied with it. Then VACUUM ANALYZE, as autovacuum would after such a load.

Measures, one request at a time after warm-up requests, the first page
(`limit=20`) and a deep page (`offset=10000`) of every list, and checks each answer:
a full page and the exact total. The walk is over the contract's list operations as
the contract declares them: a list operation with no declared records fails the run,
so a new list joins it or says why not.

Uses its own database `socialpub_bench_lists` (dropped and recreated). Results are
printed and written to bench/lists-results.json. Exit status 0 when the measurement
ran (targets met or not), 2 when a process failed.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from area_bench import api_env, bench_main, database_url, p95, recreate_database, timed_get, upgraded_workspace
from procs import BenchError, free_port, verdict

import api as api_bench  # the API benchmark's server and CLI helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_lists"
DATABASE_URL = database_url(DB_NAME)
RECORDS = 100_000
WARMUP = 10
REQUESTS = 60  # per list and page
KEYS = 8  # a key allows 1,000 requests a minute: the requests go round these
DEEP_OFFSET = 10_000
MEASURED_ELSEWHERE = {"searchWorkspace": "bench/search.py", "searchIndex": "bench/search.py"}
TARGETS = {"list_p95_ms": 50.0}


@dataclass
class Seed:
    """A list's records: `make(session, workspace, made)` makes the one record copied
    (`made` keeps records the lists of their parts use), `copies` the tables copied
    ((table, column naming the record, columns that name a record copied with the
    same copy), in order). The list's path is the contract's, a record it names
    (`{feedId}`) the record's own (`feed_id`). Its exact total is counted in the
    database: the rows of the first table copied that are the named record's parts
    (`feed_id`), or else of the workspace's test mode, or that `counted(record)`
    selects (SQL and its parameters); plus `beyond` (records the list shows that are
    not rows, such as built-in ones)."""

    make: Callable
    copies: list[tuple[str, str, tuple[str, ...]]]
    counted: Callable[[object], tuple[str, tuple]] | None = None
    beyond: int = 0


def _seeds() -> dict[str, Seed]:
    from persistence.ai import ConversationMessage
    from persistence.analytics import TrackedPost
    from persistence.calendar import CalendarActivity, CalendarComment
    from persistence.competitors import CompetitorPost
    from persistence.influencers import InfluencerList
    from persistence.posts import PostTarget
    from socialpub.autoreply import replies
    from tests.ai.factories import make_conversation
    from tests.autoreply.factories import make_account
    from tests.autoreply.factories import make_rule as make_reply_rule
    from tests.competitors.factories import make_competitor
    from tests.crisis.factories import make_contact, make_incident
    from tests.crisis.factories import make_rule as make_crisis_rule
    from tests.influencers.factories import make_campaign, make_influencer, make_payment
    from tests.linkinbio.factories import make_page
    from tests.listening.factories import make_monitor, make_report, make_signal
    from tests.rss.contract import make_feed, make_item
    from tests.support.factories import make_bulk_operation, make_post
    from tests.templates.factories import make_collection, make_hashtag_set, make_template

    def added(session, record):
        session.add(record)
        session.commit()
        return record

    def tenant(workspace) -> dict:
        return {"workspace_id": workspace.id, "livemode": False}

    def post_with_target(session, workspace, made):
        post = make_post(session, workspace, content="Autumn menu: pumpkin soup is back", platforms=["mastodon"])
        account = made.setdefault("account", make_account(session, workspace, handle="@bench"))
        target = added(session, PostTarget(**tenant(workspace), post_id=post.id, platform="mastodon",
                                           account_id=account.id, status="pending"))
        made["post"], made["target"] = post, target
        return post

    def tracked_post(session, workspace, made):
        post, target = made["post"], made["target"]
        now = dt.datetime.now(dt.timezone.utc)
        return added(session, TrackedPost(
            **tenant(workspace), target_id=target.id, post_id=post.id, account_id=target.account_id,
            platform="mastodon", published_at=now, published_day=now.date(), content_length=len(post.content),
            impressions=1200, reach=900, clicks=30, likes=40, comments=5, shares=3, engagements=48,
            captured_at=now, next_due_at=now + dt.timedelta(hours=1),
        ))

    def message(session, workspace, conversation):
        return added(session, ConversationMessage(**tenant(workspace), conversation_id=conversation.id, position=2,
                                                  role="user", content="Ideas for a spring menu post?"))

    def competitor_post(session, workspace, competitor):
        now = dt.datetime.now(dt.timezone.utc)
        return added(session, CompetitorPost(
            workspace_id=workspace.id, livemode=False, competitor_id=competitor.id, platform="mastodon",
            external_id="109", handle="@acme", source="api", content="Our autumn blend is here", posted_at=now,
            likes=20, comments=2, shares=1, engagements=23, hashtags=["coffee"], created_at=now, updated_at=now,
        ))

    def comment(session, workspace, made):
        return added(session, CalendarComment(**tenant(workspace), date=dt.date(2026, 12, 1),
                                              body="Swap this with Friday's post?", author="Ana", mentions=[]))

    def activity(session, workspace, made):
        post = made["post"]
        return added(session, CalendarActivity(
            **tenant(workspace), type="post.scheduled", subject_type="post", subject_id=post.id, post_id=post.id,
            actor="Ana", summary="Scheduled a post", scheduled_at=dt.datetime.now(dt.timezone.utc),
        ))

    def kept(name: str, make: Callable) -> Callable:
        """The record `make` makes, kept as `name` for the lists of its parts."""
        def making(session, workspace, made):
            made[name] = make(session, workspace)
            return made[name]
        return making

    def of(name: str, make: Callable) -> Callable:
        """A part of the record kept as `name` (a feed's item): `make(session, workspace, that record)`."""
        return lambda session, workspace, made: make(session, workspace, made[name])

    return {
        "listPosts": Seed(post_with_target, [("posts", "id", ()), ("post_targets", "post_id", ("post_id",))]),
        "listAccounts": Seed(lambda s, w, m: m["account"], [("connected_accounts", "id", ())]),
        "listConversations": Seed(kept("conversation", make_conversation), [("ai_conversations", "id", ())]),
        "listConversationMessages": Seed(of("conversation", message), [("ai_messages", "id", ())]),
        "listOperations": Seed(lambda s, w, m: make_bulk_operation(s, w), [("bulk_operations", "id", ())]),
        # Each tracked post is of its own post and target, copied with it.
        "listPostAnalytics": Seed(tracked_post, [("analytics_posts", "id", ("post_id", "target_id"))]),
        "listFeeds": Seed(kept("feed", make_feed), [("rss_feeds", "id", ())]),
        "listFeedItems": Seed(of("feed", lambda s, w, feed: make_item(s, feed)), [("rss_items", "id", ())]),
        "listTemplates": Seed(lambda s, w, m: make_template(s, w), [("templates", "id", ())]),
        "listTemplateCollections": Seed(lambda s, w, m: make_collection(s, w), [("template_collections", "id", ())]),
        "listHashtagSets": Seed(lambda s, w, m: make_hashtag_set(s, w), [("hashtag_sets", "id", ())]),
        "listAutoReplyRules": Seed(lambda s, w, m: make_reply_rule(s, w), [("autoreply_rules", "id", ())]),
        "listReplyTemplates": Seed(lambda s, w, m: make_template(s, w, name="Thanks", kind="reply"),
                                   [("templates", "id", ())],
                                   counted=lambda record: ("workspace_id = %s AND NOT livemode AND kind = 'reply'",
                                                           (record.workspace_id,)),
                                   beyond=len(replies.BUILT_IN)),
        "listCalendarComments": Seed(comment, [("calendar_comments", "id", ())]),
        "listCalendarActivity": Seed(activity, [("calendar_activity", "id", ())]),
        "listListeningMonitors": Seed(kept("monitor", make_monitor), [("listening_monitors", "id", ())]),
        "listSignals": Seed(lambda s, w, m: make_signal(s, w), [("listening_signals", "id", ())]),
        "listListeningReports": Seed(of("monitor", lambda s, w, monitor: make_report(s, w, monitor=monitor)),
                                     [("listening_reports", "id", ())]),
        "listCrisisRules": Seed(lambda s, w, m: make_crisis_rule(s, w), [("crisis_rules", "id", ())]),
        "listCrisisIncidents": Seed(lambda s, w, m: make_incident(s, w), [("crisis_incidents", "id", ())]),
        "listCrisisContacts": Seed(lambda s, w, m: make_contact(s, w), [("crisis_contacts", "id", ())]),
        "listInfluencers": Seed(kept("influencer", make_influencer), [
            ("influencers", "id", ()), ("influencer_handles", "influencer_id", ("influencer_id",))]),
        "listInfluencerLists": Seed(
            lambda s, w, m: added(s, InfluencerList(**tenant(w), name="Coffee", name_key="coffee")),
            [("influencer_lists", "id", ())]),
        "listInfluencerCampaigns": Seed(lambda s, w, m: make_campaign(s, w), [("influencer_campaigns", "id", ())]),
        "listInfluencerPayments": Seed(of("influencer", make_payment), [("influencer_payments", "id", ())]),
        "listLinkinbioPages": Seed(lambda s, w, m: make_page(s, w), [("linkinbio_pages", "id", ())]),
        "listCompetitors": Seed(kept("competitor", make_competitor), [
            ("competitors", "id", ()), ("competitor_handles", "competitor_id", ("competitor_id",))]),
        "listCompetitorPosts": Seed(of("competitor", competitor_post), [("competitor_posts", "id", ())]),
    }


def list_operations() -> list[tuple[str, str]]:
    """(operationId, path) of every paginated GET of the contract."""
    from socialpub.contract_bundle import bundle

    found = []
    for path, item in bundle()["paths"].items():
        operation = item.get("get")
        if operation and any(p.get("$ref", "").endswith("/parameters/Offset") for p in operation.get("parameters", [])):
            found.append((operation["operationId"], path))
    return found


def _copy_statement(table, column: str, remapped: tuple[str, ...]) -> str:
    """INSERT ... SELECT copying the rows of `table` whose `column` names the record,
    RECORDS - 1 times: ids (and `remapped` columns) made from the original's and the
    copy's number, so a part copied with its record names that record's copy."""
    from sqlalchemy import Date, DateTime, Integer, String, Text

    unique = {col.name for constraint in table.constraints if constraint.__class__.__name__ == "UniqueConstraint"
              for col in constraint.columns}
    unique |= {col.name for index in table.indexes if index.unique for col in index.columns}
    names, values = [], []
    for col in table.columns:
        name = f'"{col.name}"'
        names.append(name)
        if (col.primary_key and col.name == "id") or col.name in remapped:
            value = f"md5({name}::text || '-' || g)::uuid"
        elif col.name in unique and isinstance(col.type, (String, Text)) and not col.foreign_keys:
            keep = (col.type.length or 200) - 8
            value = f"left({name}, {keep}) || '-' || g"
        elif col.name in unique and isinstance(col.type, Integer) and not col.foreign_keys:
            value = f"{name} + g"
        elif isinstance(col.type, DateTime) and not isinstance(col.type, Date):
            value = f"{name} - g * interval '1 second'"
        else:
            value = name
        values.append(value)
    return (f'INSERT INTO "{table.name}" ({", ".join(names)}) SELECT {", ".join(values)} '
            f'FROM "{table.name}", generate_series(1, {RECORDS - 1}) AS g WHERE "{column}" = %s')


def load(workspace_id: uuid.UUID, seeds: dict[str, Seed], paths: dict[str, str]
         ) -> tuple[dict[str, object], dict[str, int]]:
    """Every list's record made and copied: the records, and each list's exact total, by operation."""
    import psycopg
    from sqlalchemy.orm import Session

    from persistence.db import Database
    from persistence.models import Base
    from persistence.workspaces import Workspace
    from socialpub.areas import import_models

    import_models()
    tables = Base.metadata.tables
    database = Database(DATABASE_URL)
    records, made = {}, {}
    try:
        # Not expired at commit: the records' ids and parents are read after the session.
        with Session(database.engine, expire_on_commit=False) as session:
            workspace = session.get(Workspace, workspace_id)
            for operation, seed in seeds.items():
                records[operation] = seed.make(session, workspace, made)
                session.commit()
    finally:
        database.engine.dispose()
    with psycopg.connect(DATABASE_URL.replace("+psycopg", ""), autocommit=True) as conn:
        for operation, seed in seeds.items():
            started = time.perf_counter()
            for table, column, remapped in seed.copies:
                conn.execute(_copy_statement(tables[table], column, remapped), (records[operation].id,))
            print(f"  {operation:<28} {RECORDS:,} records in {time.perf_counter() - started:5.1f} s", flush=True)
        conn.execute("VACUUM ANALYZE")
        totals = {}
        for operation, seed in seeds.items():
            where, parameters = counted(seed, paths[operation], records[operation])
            found = conn.execute(f'SELECT count(*) FROM "{seed.copies[0][0]}" WHERE {where}', parameters)
            totals[operation] = found.fetchone()[0] + seed.beyond
            if totals[operation] < RECORDS:
                raise BenchError(f"{operation}: {totals[operation]:,} records counted, {RECORDS:,} copied")
    return records, totals


_NAMED = re.compile(r"\{(\w+)Id\}")  # a record a path names: {feedId} is a record's feed_id


def list_path(template: str, record) -> str:
    """The list's path in the contract, each record it names (`{feedId}`) the record's
    own (`record.feed_id`)."""
    return _NAMED.sub(lambda name: str(getattr(record, f"{name[1]}_id")), template)


def counted(seed: Seed, template: str, record) -> tuple[str, tuple]:
    """What the list's exact total counts (see Seed): SQL and its parameters."""
    if seed.counted is not None:
        return seed.counted(record)
    named = _NAMED.findall(template)
    if named:
        column = f"{named[-1]}_id"
        return f'"{column}" = %s', (getattr(record, column),)
    return "workspace_id = %s AND NOT livemode", (record.workspace_id,)


def measure(port: int, keys: list[str], operation: str, path: str, expected: int) -> dict:
    headers = [{"Authorization": f"Bearer {key}"} for key in keys]
    pages = {"first": {"limit": 20}, "deep": {"limit": 20, "offset": DEEP_OFFSET}}
    results = {}
    for page, params in pages.items():
        url = f"/api/v1{path}?{urlencode(params)}"
        latencies = []
        for n in range(WARMUP + REQUESTS):
            took, answer = timed_get(port, url, headers[n % len(headers)])
            body = json.loads(answer)
            total, rows = body["pagination"]["totalItems"], len(body["data"])
            if total != expected or rows != 20:
                raise BenchError(f"{operation} ({page} page) answered {rows} rows of {total}; {expected} expected")
            if n >= WARMUP:
                latencies.append(took)
        results[page] = {"p50_ms": statistics.median(latencies), "p95_ms": p95(latencies), "max_ms": max(latencies)}
    return results


def run(work_dir: Path) -> dict:
    env = api_env(DATABASE_URL)
    print(f"preparing database {DB_NAME} ...", flush=True)
    recreate_database(DB_NAME)
    workspace = upgraded_workspace(env, "Lists bench")
    keys = [api_bench.run_cli(["key", "create", "--workspace", workspace["id"], "--name", f"lists bench {n}",
                               "--all-scopes", "--mode", "test", "--per-minute", "1000", "--per-day", "100000",
                               "--json"], env)["key"] for n in range(KEYS)]
    seeds = _seeds()
    walked = list_operations()
    missing = [operation for operation, _path in walked
               if operation not in seeds and operation not in MEASURED_ELSEWHERE]
    if missing:
        raise BenchError(f"list operations with no records declared in bench/lists.py: {', '.join(missing)}")
    started = time.perf_counter()
    records, totals = load(uuid.UUID(workspace["id"]), seeds, dict(walked))
    print(f"  loaded {len(seeds)} lists of {RECORDS:,} in {time.perf_counter() - started:.1f} s", flush=True)
    background = api_bench.background_load()
    port = free_port()
    api_bench.start_gunicorn("api", "socialpub.app:create_app()", port, env, work_dir)
    lists = {}
    for operation, template in walked:
        if operation in MEASURED_ELSEWHERE:
            continue
        path = list_path(template, records[operation])
        lists[operation] = measure(port, keys, operation, path, totals[operation])
        first, deep = lists[operation]["first"], lists[operation]["deep"]
        print(f"  {operation:<28} first page p50 {first['p50_ms']:6.1f} p95 {first['p95_ms']:6.1f} ms   "
              f"offset {DEEP_OFFSET:,} p50 {deep['p50_ms']:6.1f} p95 {deep['p95_ms']:6.1f} ms", flush=True)
    return {"records": RECORDS, "lists": lists, "measured_elsewhere": MEASURED_ELSEWHERE,
            "background_cpu_percent": background}


def report(results: dict) -> None:
    target = TARGETS["list_p95_ms"]
    print(f"\nevery list at {results['records']:,} records (other processes' CPU before it: "
          f"{results['background_cpu_percent']} %)")
    for operation, pages in results["lists"].items():
        for page, numbers in pages.items():
            value = numbers["p95_ms"]
            print(f"  {operation + ' ' + page + ' page p95':<46} {value:8.2f} ms  target < {target:g} ms  "
                  f"{verdict(value < target)}")
    for operation, where in results["measured_elsewhere"].items():
        print(f"  {operation:<46} measured by {where}")


def main() -> int:
    return bench_main("lists", run, report, TARGETS)


if __name__ == "__main__":
    sys.exit(main())
