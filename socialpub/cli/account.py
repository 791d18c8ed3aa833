"""`socialpub account connect|list|disconnect`: connected social accounts. Secrets are
encrypted at rest; --secrets-stdin keeps tokens out of the process list."""
from __future__ import annotations

import json
import sys

from socialpub.accounts import service as accounts
from socialpub.cli.common import (
    MODES, OPERATOR, UsageError, add_command, add_noun, add_workspace_command, database, emit, mode_name,
    parse_uuid,
)
from socialpub.platforms import PLATFORMS

CONNECTORS = ("sandbox", "mastodon", "bluesky", "telegram", "discord")


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


def _account_row(account) -> dict:
    return {
        "id": str(account.id),
        "platform": account.platform,
        "handle": account.handle,
        "connector": account.connector,
        "mode": mode_name(account.livemode),
        "status": account.status,
    }


def connect(args, settings):
    secrets = _pairs(args.secret, "--secret")
    if args.secrets_stdin:
        try:
            given = json.loads(sys.stdin.read() or "{}")
        except ValueError:
            raise UsageError("--secrets-stdin expects a JSON object on standard input") from None
        if not isinstance(given, dict):
            raise UsageError(f"--secrets-stdin expects a JSON object on standard input, not {_json_kind(given)}")
        secrets.update(given)
    with database(settings).transaction() as session:
        account = accounts.connect_account(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), platform=args.platform, mode=args.mode,
            connector=args.connector or ("sandbox" if args.mode == "test" else args.platform),
            handle=args.handle, options=_pairs(args.option, "--option"), secrets=secrets,
        )
        payload = _account_row(account)
    emit(args, payload, f"Connected {payload['platform']} account {payload['handle']} ({payload['id']}, {payload['mode']}).")


def list_accounts(args, settings):
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        rows = [
            _account_row(account)
            for account in accounts.workspace_accounts(session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), livemode=livemode)
        ]
    text = "\n".join(f"{r['id']}  {r['mode']}  {r['platform']:<10} {r['connector']:<9} {r['status']:<12} {r['handle']}" for r in rows)
    emit(args, {"accounts": rows}, text or "No accounts.")


def disconnect(args, settings):
    account_id = parse_uuid(args.account_id)
    with database(settings).transaction() as session:
        # The operator names an account by its id alone; the service acts within its workspace.
        workspace_id = accounts.workspace_of_account(session=session, account_id=account_id)
        account = accounts.disable_account(session=session, actor=OPERATOR, workspace_id=workspace_id, account_id=account_id)
        payload = _account_row(account)
    emit(args, payload, f"Disconnected account {payload['id']}.")


def register(commands) -> None:
    actions = add_noun(commands, "account", help="connected social accounts")

    command = add_workspace_command(
        actions,
        "connect",
        help="connect an account",
        run=connect,
        description=(
            "Options and secrets per connector: mastodon --option instance_url=https://... --secret access_token=...; "
            "bluesky --option service_url=https://bsky.social --secret identifier=... --secret app_password=...; "
            "telegram --option chat_id=... --secret bot_token=...; discord --secret webhook_url=https://discord.com/api/webhooks/...; "
            "sandbox (test mode) --option failTransient=2 | failPermanent=true | authFailed=true | latencyMs=200 | latencyJitterMs=100. "
            "Prefer --secrets-stdin to keep tokens out of the process list."
        ),
    )
    command.add_argument("--platform", required=True, choices=sorted(PLATFORMS))
    command.add_argument("--mode", choices=MODES, required=True)
    command.add_argument("--connector", choices=CONNECTORS, help="default: sandbox in test mode, the platform's own in live mode")
    command.add_argument("--handle", required=True)
    command.add_argument("--option", action="append", metavar="NAME=VALUE")
    command.add_argument("--secret", action="append", metavar="NAME=VALUE")
    command.add_argument("--secrets-stdin", action="store_true", help="read secrets as a JSON object from standard input")

    command = add_workspace_command(actions, "list", help="list a workspace's connected accounts", run=list_accounts)
    command.add_argument("--mode", choices=MODES, help="only this mode's accounts (default: both)")

    command = add_command(actions, "disconnect", help="disable a connected account", run=disconnect)
    command.add_argument("account_id")
