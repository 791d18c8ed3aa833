"""`socialpub`: operate the service from a shell.

Every command prints one JSON object with --json. Bad input prints one line on
stderr and exits with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys

from socialpub.config import Settings
from socialpub.errors import ApiError
from socialpub.scopes import ALL_SCOPES, PLANS

DEMO_WORKSPACE_NAME = "Demo workspace"


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        raise UsageError(message)


def _database(settings: Settings):
    from persistence.db import Database

    return Database(settings.database_url)


def _print(args, payload: dict, text: str) -> None:
    print(json.dumps(payload) if getattr(args, "json", False) else text)


def _uuid(value: str):
    import uuid

    try:
        return uuid.UUID(value)
    except ValueError:
        raise UsageError(f"not an id: {value!r}") from None


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    return number


def cmd_db_upgrade(args, settings):
    from persistence.migrate import upgrade

    upgrade(settings.database_url)
    _print(args, {"database": "upgraded"}, "Database is at the latest schema.")


def cmd_workspace_create(args, settings):
    from socialpub.services import workspaces

    with _database(settings).transaction() as session:
        workspace = workspaces.create_workspace(session=session, name=args.name, plan=args.plan)
        payload = {"id": str(workspace.id), "name": workspace.name, "plan": workspace.plan}
    _print(args, payload, f"Created workspace {payload['id']} ({payload['name']}, {payload['plan']}).")


def _scopes(args) -> list[str]:
    if args.all_scopes:
        return list(ALL_SCOPES)
    scopes = [scope.strip() for scope in args.scopes.split(",") if scope.strip()]
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown:
        raise UsageError(f"unknown scope(s): {', '.join(unknown)}")
    return scopes


def cmd_key_create(args, settings):
    from socialpub.services import api_keys

    with _database(settings).transaction() as session:
        api_key, value = api_keys.create_api_key(
            session=session,
            workspace_id=_uuid(args.workspace),
            name=args.name,
            scopes=_scopes(args),
            mode=args.mode,
            per_minute=args.per_minute,
            per_day=args.per_day,
            expires_in_days=args.expires_in_days,
        )
        payload = {"id": str(api_key.id), "key": value, "mode": args.mode, "scopes": api_key.scopes}
    _print(args, payload, f"Created key {payload['id']}. Its value is shown once:\n{value}")


def cmd_key_list(args, settings):
    from socialpub.services import api_keys

    with _database(settings).transaction() as session:
        rows = [
            {
                "id": str(key.id),
                "name": key.name,
                "prefix": api_keys.current_prefix(key),
                "mode": "live" if key.livemode else "test",
                "scopes": key.scopes,
                "perMinute": key.per_minute,
                "perDay": key.per_day,
                "expiresAt": key.expires_at.isoformat() if key.expires_at else None,
                "revokedAt": key.revoked_at.isoformat() if key.revoked_at else None,
                "lastUsedAt": key.last_used_at.isoformat() if key.last_used_at else None,
                "createdAt": key.created_at.isoformat(),
            }
            for key in api_keys.list_api_keys(session=session, workspace_id=_uuid(args.workspace))
        ]
    text = "\n".join(
        f"{r['id']}  {r['prefix']}...  {r['mode']}  {r['name']}{'  (revoked)' if r['revokedAt'] else ''}" for r in rows
    ) or "No keys."
    _print(args, {"keys": rows}, text)


def cmd_key_roll(args, settings):
    from socialpub.services import api_keys

    with _database(settings).transaction() as session:
        api_key, value = api_keys.roll_api_key(session=session, api_key_id=_uuid(args.key_id), grace_hours=args.grace_hours)
        payload = {"id": str(api_key.id), "key": value}
    _print(args, payload, f"Rolled key {payload['id']}. New value, shown once:\n{value}")


def cmd_key_revoke(args, settings):
    from socialpub.services import api_keys

    with _database(settings).transaction() as session:
        api_key = api_keys.revoke_api_key(session=session, api_key_id=_uuid(args.key_id))
        payload = {"id": str(api_key.id), "revoked": True}
    _print(args, payload, f"Revoked key {payload['id']}.")


def cmd_demo(args, settings):
    from sqlalchemy import select

    from persistence.models import Workspace
    from socialpub.services import api_keys, workspaces

    with _database(settings).transaction() as session:
        workspace = session.execute(
            select(Workspace).where(Workspace.name == DEMO_WORKSPACE_NAME).order_by(Workspace.created_at)
        ).scalars().first()
        if workspace is None:
            workspace = workspaces.create_workspace(session=session, name=DEMO_WORKSPACE_NAME, plan="business")
        _, value = api_keys.create_api_key(
            session=session, workspace_id=workspace.id, name="Demo test key", scopes=ALL_SCOPES, mode="test"
        )
        payload = {"workspace": str(workspace.id), "key": value}
    _print(args, payload, f"Demo workspace {payload['workspace']}\nTest key (every scope): {value}")


def cmd_serve(args, settings):
    import uvicorn

    from socialpub.app import create_app
    from workers.scheduler import PeriodicScheduler

    app = create_app(settings)
    runtime = app.app.extensions["socialpub"]
    # On the embedded default the API process also runs the periodic jobs, on the
    # app's queue (in-process threads, or RQ when REDIS_URL is set).
    scheduler = PeriodicScheduler(runtime.queue).start()
    base = f"http://{args.host}:{args.port}"
    print(f"Serving the API at {base}/api/v1  (docs: {base}/api/v1/ui/)", flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        scheduler.stop()
        runtime.close()


def cmd_worker(args, settings):
    if not settings.redis_url:
        raise UsageError("socialpub worker needs REDIS_URL (the embedded default runs jobs inside `socialpub serve`)")
    from redis import Redis
    from rq import Queue, Worker

    from workers import context

    from workers.queue import RQQueue
    from workers.scheduler import PeriodicScheduler

    context.install(_database(settings))
    connection = Redis.from_url(settings.redis_url)
    scheduler = PeriodicScheduler(RQQueue(settings.redis_url)).start()
    try:
        Worker([Queue("default", connection=connection)], connection=connection).work(with_scheduler=True)
    finally:
        scheduler.stop()


def build_parser() -> Parser:
    parser = Parser(prog="socialpub", description="Operate the socialpub service.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    db = commands.add_parser("db", help="database schema").add_subparsers(dest="action", required=True, parser_class=Parser)
    upgrade = db.add_parser("upgrade", help="migrate to the latest schema")
    upgrade.add_argument("--json", action="store_true")
    upgrade.set_defaults(run=cmd_db_upgrade)

    workspace = commands.add_parser("workspace").add_subparsers(dest="action", required=True, parser_class=Parser)
    create = workspace.add_parser("create")
    create.add_argument("--name", required=True)
    create.add_argument("--plan", required=True, choices=PLANS)
    create.add_argument("--json", action="store_true")
    create.set_defaults(run=cmd_workspace_create)

    key = commands.add_parser("key").add_subparsers(dest="action", required=True, parser_class=Parser)
    create = key.add_parser("create")
    create.add_argument("--workspace", required=True)
    create.add_argument("--name", required=True)
    scopes = create.add_mutually_exclusive_group(required=True)
    scopes.add_argument("--scopes")
    scopes.add_argument("--all-scopes", action="store_true")
    create.add_argument("--mode", choices=("test", "live"), default="test")
    create.add_argument("--per-minute", type=_positive)
    create.add_argument("--per-day", type=_positive)
    create.add_argument("--expires-in-days", type=_positive)
    create.add_argument("--json", action="store_true")
    create.set_defaults(run=cmd_key_create)
    listing = key.add_parser("list")
    listing.add_argument("--workspace", required=True)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_key_list)
    roll = key.add_parser("roll")
    roll.add_argument("key_id")
    roll.add_argument("--grace-hours", type=float, default=0)
    roll.add_argument("--json", action="store_true")
    roll.set_defaults(run=cmd_key_roll)
    revoke = key.add_parser("revoke")
    revoke.add_argument("key_id")
    revoke.add_argument("--json", action="store_true")
    revoke.set_defaults(run=cmd_key_revoke)

    serve = commands.add_parser("serve", help="serve the API (embedded default: jobs in-process)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=cmd_serve)

    worker = commands.add_parser("worker", help="run an RQ worker (needs REDIS_URL)")
    worker.set_defaults(run=cmd_worker)

    demo = commands.add_parser("demo", help="a business-plan demo workspace and a test key with every scope")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(run=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        settings = Settings.from_env()
        args.run(args, settings)
    except UsageError as exc:
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"socialpub: error: {exc.message}", file=sys.stderr)
        return 2
    except ValueError as exc:  # configuration values
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
