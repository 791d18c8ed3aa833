"""`socialpub account connect|list|disconnect`: connected social accounts. Secrets are
encrypted at rest; --secrets-stdin keeps tokens out of the process list.

`socialpub account platforms|authorize|complete|choose`: accounts of the OAuth
platforms (X, LinkedIn, ...), connected in live mode by an operator without a browser
session: `authorize` prints the URL to open; `complete` takes the whole URL the
platform redirected to afterwards and connects the account (or lists what it can be
connected as, for `choose`)."""
from __future__ import annotations

import json
import sys

from socialpub.accounts import oauth
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


# An authorization the CLI starts is bound to the CLI: a dashboard session cannot
# complete it, nor the CLI one a member started.
CLI = "cli"


def platforms(args, settings):
    rows = [{"platform": p.platform, "label": p.label, "configured": p.configured} for p in oauth.oauth_platforms(settings)]
    text = "\n".join(f"{r['platform']:<10} {r['label']:<10} {'configured' if r['configured'] else 'not configured'}"
                     for r in rows)
    emit(args, {"platforms": rows}, text)


def authorize(args, settings):
    with database(settings).transaction() as session:
        url = oauth.start_authorization(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), platform=args.platform,
            settings=settings, bound_to=CLI,
        )
    emit(args, {"platform": args.platform, "authorizationUrl": url}, (
        f"Open this URL, grant access, then give the URL you are sent back to to "
        f"`socialpub account complete --workspace {args.workspace} --platform {args.platform} --callback-url URL` "
        f"(within 10 minutes):\n{url}"
    ))


def _choices_text(args, completion) -> str:
    lines = [f"{identity.external_id}  {identity.handle}" for identity in completion.choices]
    return (
        "These tokens can publish as several accounts; connect one with "
        f"`socialpub account choose --workspace {args.workspace} --authorization {completion.authorization_id} "
        "--identity ID` (within 10 minutes):\n" + "\n".join(lines)
    )


def complete(args, settings):
    with database(settings).transaction() as session:
        completion = oauth.complete_authorization(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), platform=args.platform,
            callback_url=args.callback_url, settings=settings, bound_to=CLI,
        )
        if completion.account is not None:
            payload = _account_row(completion.account)
            text = f"Connected {payload['platform']} account {payload['handle']} ({payload['id']}, live)."
        else:
            payload = {"authorization": str(completion.authorization_id), "choices": [
                {"id": identity.external_id, "handle": identity.handle} for identity in completion.choices
            ]}
            text = _choices_text(args, completion)
    emit(args, payload, text)


def choose(args, settings):
    with database(settings).transaction() as session:
        account = oauth.choose_identity(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), authorization_id=args.authorization,
            external_id=args.identity, settings=settings, bound_to=CLI,
        )
        payload = _account_row(account)
    emit(args, payload, f"Connected {payload['platform']} account {payload['handle']} ({payload['id']}, live).")


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

    add_command(actions, "platforms", help="the OAuth platforms, and whether this service is configured for each",
                run=platforms)
    oauth_names = list(oauth.OAUTH_PLATFORMS)
    command = add_workspace_command(actions, "authorize", help="print the URL that connects an account of an OAuth platform",
                                    run=authorize)
    command.add_argument("--platform", required=True, choices=oauth_names)
    command = add_workspace_command(
        actions, "complete", help="connect the account an OAuth authorization granted (live mode)", run=complete,
    )
    command.add_argument("--platform", required=True, choices=oauth_names)
    command.add_argument("--callback-url", required=True, help="the whole URL the platform redirected to")
    command = add_workspace_command(actions, "choose", help="connect one of the accounts an authorization can publish as",
                                    run=choose)
    command.add_argument("--authorization", required=True)
    command.add_argument("--identity", required=True, help="the id `complete` listed")
