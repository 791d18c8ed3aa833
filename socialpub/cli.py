"""`socialpub`: operate the service from a shell.

Every command prints one JSON object with --json. Bad input prints one line on
stderr and exits with status 2; a command that ran but did not succeed (`webhook
test` whose delivery failed) exits with status 1.
"""
from __future__ import annotations

import argparse
import json
import sys

from socialpub.config import Settings
from socialpub.crypto import EncryptionKeysRefused
from socialpub.errors import ApiError
from socialpub.scopes import ALL_SCOPES, PLANS
from socialpub.platforms import PLATFORMS

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
    from socialpub.workspaces import service as workspaces

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
    from socialpub.keys import service as api_keys

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
    from persistence.workspaces import Workspace
    from socialpub.keys import service as api_keys

    workspace_id = _uuid(args.workspace)
    with _database(settings).transaction() as session:
        # A mistyped id is an error, not an empty list.
        if session.get(Workspace, workspace_id) is None:
            raise ApiError.not_found("workspace", workspace_id)
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
            for key in api_keys.list_api_keys(session=session, workspace_id=workspace_id)
        ]
    text = "\n".join(
        f"{r['id']}  {r['prefix']}...  {r['mode']}  {r['name']}{'  (revoked)' if r['revokedAt'] else ''}" for r in rows
    ) or "No keys."
    _print(args, {"keys": rows}, text)


def cmd_key_roll(args, settings):
    from socialpub.keys import service as api_keys

    with _database(settings).transaction() as session:
        api_key, value = api_keys.roll_api_key(session=session, api_key_id=_uuid(args.key_id), grace_hours=args.grace_hours)
        payload = {"id": str(api_key.id), "key": value}
    _print(args, payload, f"Rolled key {payload['id']}. New value, shown once:\n{value}")


def cmd_key_revoke(args, settings):
    from socialpub.keys import service as api_keys

    with _database(settings).transaction() as session:
        api_key = api_keys.revoke_api_key(session=session, api_key_id=_uuid(args.key_id))
        payload = {"id": str(api_key.id), "revoked": True}
    _print(args, payload, f"Revoked key {payload['id']}.")


def _pairs(items, what: str) -> dict:
    values = {}
    for item in items or []:
        name, separator, value = item.partition("=")
        if not separator or not name:
            raise UsageError(f"{what} must look like name=value, got {item!r}")
        # Numbers and true/false become JSON values (sandbox behaviour options).
        try:
            values[name] = json.loads(value) if value in ("true", "false") or value.lstrip("-").replace(".", "", 1).isdigit() else value
        except ValueError:
            values[name] = value
    return values


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def cmd_account_connect(args, settings):
    from socialpub.accounts import service as accounts

    secrets = _pairs(args.secret, "--secret")
    if args.secrets_stdin:
        try:
            given = json.loads(sys.stdin.read() or "{}")
        except ValueError:
            raise UsageError("--secrets-stdin expects a JSON object on standard input") from None
        if not isinstance(given, dict):
            raise UsageError(f"--secrets-stdin expects a JSON object on standard input, not {_json_kind(given)}")
        secrets.update(given)
    with _database(settings).transaction() as session:
        account = accounts.connect_account(
            session=session, workspace_id=_uuid(args.workspace), platform=args.platform, mode=args.mode,
            connector=args.connector or ("sandbox" if args.mode == "test" else args.platform),
            handle=args.handle, options=_pairs(args.option, "--option"), secrets=secrets,
        )
        payload = _account_row(account)
    _print(args, payload, f"Connected {payload['platform']} account {payload['handle']} ({payload['id']}, {payload['mode']}).")


def _account_row(account) -> dict:
    return {
        "id": str(account.id),
        "platform": account.platform,
        "handle": account.handle,
        "connector": account.connector,
        "mode": "live" if account.livemode else "test",
        "status": account.status,
    }


def cmd_account_list(args, settings):
    from socialpub.accounts import service as accounts

    livemode = None if args.mode is None else args.mode == "live"
    with _database(settings).transaction() as session:
        rows = [
            _account_row(account)
            for account in accounts.workspace_accounts(session=session, workspace_id=_uuid(args.workspace), livemode=livemode)
        ]
    text = "\n".join(f"{r['id']}  {r['mode']}  {r['platform']:<10} {r['connector']:<9} {r['status']:<12} {r['handle']}" for r in rows)
    _print(args, {"accounts": rows}, text or "No accounts.")


def cmd_account_disconnect(args, settings):
    from socialpub.accounts import service as accounts

    with _database(settings).transaction() as session:
        payload = _account_row(accounts.disable_account(session=session, account_id=_uuid(args.account_id)))
    _print(args, payload, f"Disconnected account {payload['id']}.")


def _webhook_row(endpoint) -> dict:
    return {
        "id": str(endpoint.id),
        "url": endpoint.url,
        "mode": "live" if endpoint.livemode else "test",
        "events": endpoint.event_types,
        "description": endpoint.description,
        "enabled": endpoint.enabled,
        "disabledReason": endpoint.disabled_reason,
        "secretPrefix": endpoint.secret_prefix,
        "createdAt": endpoint.created_at.isoformat(),
    }


def _webhook_endpoint(session, endpoint_id):
    """The endpoint and its workspace: the operator names an endpoint by id alone."""
    from persistence.webhooks import WebhookEndpoint

    endpoint = session.get(WebhookEndpoint, _uuid(endpoint_id))
    if endpoint is None:
        raise ApiError.not_found("webhook endpoint", endpoint_id)
    return endpoint


def cmd_webhook_add(args, settings):
    from socialpub.webhooks import service as webhooks

    events = None
    if args.events is not None:
        events = [name.strip() for name in args.events.split(",") if name.strip()]
    with _database(settings).transaction() as session:
        endpoint, secret = webhooks.create_endpoint(
            session=session, workspace_id=_uuid(args.workspace), livemode=args.mode == "live", url=args.url,
            description=args.description, event_types=events,
        )
        payload = {"id": str(endpoint.id), "secret": secret}
    _print(args, payload, f"Added webhook endpoint {payload['id']}. Its signing secret is shown once:\n{secret}")


def cmd_webhook_list(args, settings):
    from persistence.workspaces import Workspace
    from socialpub.webhooks import service as webhooks

    workspace_id = _uuid(args.workspace)
    with _database(settings).transaction() as session:
        if session.get(Workspace, workspace_id) is None:
            raise ApiError.not_found("workspace", workspace_id)
        rows = [_webhook_row(endpoint) for endpoint in webhooks.list_endpoints(session=session, workspace_id=workspace_id)]
    text = "\n".join(
        f"{r['id']}  {r['mode']}  {'enabled ' if r['enabled'] else 'disabled'}  {r['url']}  {','.join(r['events'] or ['*'])}"
        for r in rows
    )
    _print(args, {"endpoints": rows}, text or "No webhook endpoints.")


def cmd_webhook_test(args, settings):
    from socialpub.webhooks import service as webhooks

    database = _database(settings)
    with database.transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        delivery = webhooks.send_test_event(session=session, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
    delivery = webhooks.deliver_now(database=database, delivery_id=delivery.id, settings=settings)
    payload = {
        "delivery": str(delivery.id),
        "status": delivery.status,
        "responseCode": delivery.response_status,
        "latencyMs": delivery.latency_ms,
        "error": delivery.last_error_message,
    }
    outcome = f"answered {delivery.response_status}" if delivery.response_status is not None else delivery.last_error_message
    _print(args, payload, f"test.ping {delivery.status}: {outcome} ({delivery.latency_ms} ms), delivery {delivery.id}")
    # Scripts check an endpoint with this: one that did not take the event fails the command.
    return 0 if delivery.status == webhooks.SUCCEEDED else 1


def _cmd_webhook_set(args, settings, enabled: bool):
    from socialpub.webhooks import service as webhooks

    with _database(settings).transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        endpoint = webhooks.set_endpoint_enabled(
            session=session, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id, enabled=enabled
        )
        payload = _webhook_row(endpoint)
    _print(args, payload, f"{'Enabled' if enabled else 'Disabled'} webhook endpoint {payload['id']}.")


def cmd_webhook_enable(args, settings):
    _cmd_webhook_set(args, settings, True)


def cmd_webhook_disable(args, settings):
    _cmd_webhook_set(args, settings, False)


def cmd_webhook_delete(args, settings):
    from socialpub.webhooks import service as webhooks

    with _database(settings).transaction() as session:
        endpoint = _webhook_endpoint(session, args.endpoint_id)
        webhooks.delete_endpoint(session=session, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
        payload = {"id": str(endpoint.id), "deleted": True}
    _print(args, payload, f"Deleted webhook endpoint {payload['id']}.")


def _read_password(args) -> str:
    if args.password_stdin:
        # The first line, as typed: only the line break is not part of the password.
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the password on: pipe it in with --password-stdin")
    import getpass

    password = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != password:
        raise UsageError("the passwords differ")
    return password


def cmd_user_create(args, settings):
    from socialpub.members import service as members

    password = _read_password(args)
    with _database(settings).transaction() as session:
        member = members.create_member(session=session, workspace_id=_uuid(args.workspace), email=args.email, password=password)
        payload = {"id": str(member.id), "workspace": str(member.workspace_id), "email": member.email}
    _print(args, payload, f"Created member {payload['email']} ({payload['id']}); they sign in at /dashboard.")


def cmd_demo(args, settings):
    from sqlalchemy import select

    from persistence.workspaces import Workspace
    from socialpub.keys import service as api_keys
    from socialpub.workspaces import service as workspaces

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
    from workers.scheduler import PeriodicScheduler, standard_jobs

    app = create_app(settings)
    runtime = app.app.extensions["socialpub"]
    # On the embedded default the API process also runs the dispatcher and periodic
    # jobs, on the app's queue (in-process threads, or RQ when REDIS_URL is set).
    scheduler = PeriodicScheduler(runtime.queue, standard_jobs(settings), tick_seconds=0.25).start()
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
    import logging
    import time

    from redis import Redis
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
    from rq import Queue, SimpleWorker

    from socialpub import crypto, logs
    from workers import context
    from workers.jobs import load_job_code
    from workers.queue import RQQueue
    from workers.scheduler import PeriodicScheduler, standard_jobs

    logs.configure(settings.log_level, settings.log_json)
    database = _database(settings)
    # A worker that cannot read the account secrets would fail every target it takes.
    crypto.verify_keys(database)
    queue = RQQueue(settings.redis_url)
    context.install(database, queue=queue, settings=settings)
    load_job_code()
    scheduler = PeriodicScheduler(queue, standard_jobs(settings), tick_seconds=0.25).start()

    class Worker(SimpleWorker):
        stop_requested = False

        def request_stop(self, signum, frame):
            self.stop_requested = True
            super().request_stop(signum, frame)

    log = logging.getLogger("socialpub.worker")
    try:
        while True:
            try:
                connection = Redis.from_url(settings.redis_url)
                # Jobs are short database and HTTP calls: running them in this process
                # (no fork per job) is what makes thousands a minute possible. A job
                # killed with the process loses nothing: its target's lease runs out
                # and the dispatcher hands it out again. No RQ scheduler: nothing is
                # enqueued for later (the dispatcher above is the schedule), and its
                # forked process would outlive a worker that is killed.
                worker = Worker([Queue("default", connection=connection)], connection=connection)
                worker.work(logging_level=settings.log_level)
                if worker.stop_requested:
                    return
                # RQ leaves its loop, without raising, on an error it did not expect,
                # such as Redis going away while a job's result is recorded.
                log.warning("the worker loop stopped; starting it again in 2 seconds")
            except (RedisConnectionError, RedisTimeoutError):
                log.warning("Redis unreachable; retrying in 2 seconds")
            time.sleep(2)
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

    account = commands.add_parser("account", help="connected social accounts").add_subparsers(dest="action", required=True, parser_class=Parser)
    connect = account.add_parser(
        "connect",
        help="connect an account",
        description=(
            "Options and secrets per connector: mastodon --option instance_url=https://... --secret access_token=...; "
            "bluesky --option service_url=https://bsky.social --secret identifier=... --secret app_password=...; "
            "telegram --option chat_id=... --secret bot_token=...; discord --secret webhook_url=https://discord.com/api/webhooks/...; "
            "sandbox (test mode) --option failTransient=2 | failPermanent=true | authFailed=true | latencyMs=200. "
            "Prefer --secrets-stdin to keep tokens out of the process list."
        ),
    )
    connect.add_argument("--workspace", required=True)
    connect.add_argument("--platform", required=True, choices=sorted(PLATFORMS))
    connect.add_argument("--mode", choices=("test", "live"), required=True)
    connect.add_argument("--connector", choices=("sandbox", "mastodon", "bluesky", "telegram", "discord"))
    connect.add_argument("--handle", required=True)
    connect.add_argument("--option", action="append", metavar="NAME=VALUE")
    connect.add_argument("--secret", action="append", metavar="NAME=VALUE")
    connect.add_argument("--secrets-stdin", action="store_true", help="read secrets as a JSON object from standard input")
    connect.add_argument("--json", action="store_true")
    connect.set_defaults(run=cmd_account_connect)
    listing = account.add_parser("list")
    listing.add_argument("--workspace", required=True)
    listing.add_argument("--mode", choices=("test", "live"))
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_account_list)
    disconnect = account.add_parser("disconnect")
    disconnect.add_argument("account_id")
    disconnect.add_argument("--json", action="store_true")
    disconnect.set_defaults(run=cmd_account_disconnect)

    webhook = commands.add_parser("webhook", help="webhook endpoints").add_subparsers(dest="action", required=True, parser_class=Parser)
    add = webhook.add_parser("add", help="add an endpoint; prints its signing secret once")
    add.add_argument("--workspace", required=True)
    add.add_argument("--url", required=True)
    add.add_argument("--mode", choices=("test", "live"), default="test")
    add.add_argument("--events", help="comma-separated event types (default: every type)")
    add.add_argument("--description")
    add.add_argument("--json", action="store_true")
    add.set_defaults(run=cmd_webhook_add)
    listing = webhook.add_parser("list")
    listing.add_argument("--workspace", required=True)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_webhook_list)
    for name, run, help_text in (
        ("test", cmd_webhook_test, "send test.ping now and print the outcome"),
        ("enable", cmd_webhook_enable, None),
        ("disable", cmd_webhook_disable, None),
        ("delete", cmd_webhook_delete, None),
    ):
        action = webhook.add_parser(name, help=help_text)
        action.add_argument("endpoint_id")
        action.add_argument("--json", action="store_true")
        action.set_defaults(run=run)

    user = commands.add_parser("user", help="dashboard members").add_subparsers(dest="action", required=True, parser_class=Parser)
    create = user.add_parser("create", help="add a member who signs in to the dashboard (asks for the password)")
    create.add_argument("--workspace", required=True)
    create.add_argument("--email", required=True)
    create.add_argument("--password-stdin", action="store_true", help="read the password from the first line of standard input")
    create.add_argument("--json", action="store_true")
    create.set_defaults(run=cmd_user_create)

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
        status = args.run(args, settings)
    except UsageError as exc:
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"socialpub: error: {exc.message}", file=sys.stderr)
        return 2
    except EncryptionKeysRefused as exc:
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # configuration values
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    # Commands that can run to the end and still not succeed say so with status 1.
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
