"""`socialpub key create|list|roll|revoke`: API keys. A key's value is printed once."""
from __future__ import annotations

from socialpub.cli.common import (
    MODES, OPERATOR, UsageError, add_command, add_noun, add_workspace_command, database, emit, emit_gone, isoformat,
    mode_name, parse_uuid, require_workspace, whole_number,
)
from socialpub.keys import service as api_keys
from socialpub.scopes import ALL_SCOPES


def _scopes(args) -> list[str]:
    if args.all_scopes:
        return list(ALL_SCOPES)
    scopes = [scope.strip() for scope in args.scopes.split(",") if scope.strip()]
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown:
        # A typo is easier to fix with the valid names in front of you.
        raise UsageError(f"unknown scope(s): {', '.join(unknown)} (valid scopes: {', '.join(ALL_SCOPES)})")
    return scopes


def create(args, settings):
    with database(settings).transaction() as session:
        api_key, value = api_keys.create_api_key(
            session=session, actor=OPERATOR,
            workspace_id=parse_uuid(args.workspace),
            name=args.name,
            scopes=_scopes(args),
            mode=args.mode,
            per_minute=args.per_minute,
            per_day=args.per_day,
            expires_in_days=args.expires_in_days,
        )
        payload = {"id": str(api_key.id), "key": value, "mode": args.mode, "scopes": api_key.scopes}
    emit(args, payload, f"Created key {payload['id']}. Its value is shown once:\n{value}")


def list_keys(args, settings):
    workspace_id = parse_uuid(args.workspace)
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        rows = [
            {
                "id": str(key.id),
                "name": key.name,
                "prefix": api_keys.current_prefix(key),
                "mode": mode_name(key.livemode),
                "scopes": key.scopes,
                "perMinute": key.per_minute,
                "perDay": key.per_day,
                "expiresAt": isoformat(key.expires_at),
                "revokedAt": isoformat(key.revoked_at),
                "lastUsedAt": isoformat(key.last_used_at),
                "createdAt": key.created_at.isoformat(),
            }
            for key in api_keys.list_api_keys(session=session, actor=OPERATOR, workspace_id=workspace_id)
        ]
    text = "\n".join(
        f"{r['id']}  {r['prefix']}...  {r['mode']}  {r['name']}{'  (revoked)' if r['revokedAt'] else ''}" for r in rows
    ) or "No keys."
    emit(args, {"keys": rows}, text)


def roll(args, settings):
    key_id = parse_uuid(args.key_id)
    with database(settings).transaction() as session:
        # The operator names a key by its id alone; the service acts within its workspace.
        workspace_id = api_keys.workspace_of_key(session=session, api_key_id=key_id)
        api_key, value = api_keys.roll_api_key(
            session=session, actor=OPERATOR, workspace_id=workspace_id, api_key_id=key_id, grace_hours=args.grace_hours
        )
        payload = {"id": str(api_key.id), "key": value}
    emit(args, payload, f"Rolled key {payload['id']}. New value, shown once:\n{value}")


def revoke(args, settings):
    key_id = parse_uuid(args.key_id)
    with database(settings).transaction() as session:
        workspace_id = api_keys.workspace_of_key(session=session, api_key_id=key_id)
        api_key = api_keys.revoke_api_key(session=session, actor=OPERATOR, workspace_id=workspace_id, api_key_id=key_id)
    emit_gone(args, api_key, "revoked", "key")


def register(commands) -> None:
    actions = add_noun(commands, "key", help="API keys")

    command = add_workspace_command(actions, "create", help="create a key; prints its value once", run=create)
    command.add_argument("--name", required=True)
    scopes = command.add_mutually_exclusive_group(required=True)
    scopes.add_argument("--scopes", help="comma-separated, e.g. posts:read,posts:write")
    scopes.add_argument("--all-scopes", action="store_true", help="every scope")
    command.add_argument("--mode", choices=MODES, default="test")
    command.add_argument("--per-minute", type=whole_number, help="requests a minute (1..1000; default: the service's setting)")
    command.add_argument("--per-day", type=whole_number, help="requests a day (1..100000; default: the service's setting)")
    command.add_argument("--expires-in-days", type=whole_number, help="1..3650 (default: never)")

    add_workspace_command(actions, "list", help="list a workspace's keys (prefixes, never values)", run=list_keys)

    command = add_command(actions, "roll", help="give a key a new value; the old one works for the grace period", run=roll)
    command.add_argument("key_id")
    command.add_argument("--grace-hours", type=float, default=0, help="0..720 (default 0: the old value stops at once)")

    command = add_command(actions, "revoke", help="revoke a key; its values stop working at once", run=revoke)
    command.add_argument("key_id")
