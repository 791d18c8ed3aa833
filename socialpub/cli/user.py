"""`socialpub user create|list|disable|enable|reset-password`: dashboard members, who
sign in with an email and password. A disabled member cannot sign in (their sessions
end at once); a reset password is generated and printed once."""
from __future__ import annotations

import getpass
import sys

from socialpub.cli.common import (
    UsageError, add_command, add_noun, add_workspace_command, database, emit, isoformat, parse_uuid, whole_number,
)
from socialpub.cli.records import print_rows
from socialpub.members import service as members


def _read_password(args) -> str:
    if args.password_stdin:
        # The first line, as typed: only the line break is not part of the password.
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the password on: pipe it in with --password-stdin")
    password = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != password:
        raise UsageError("the passwords differ")
    return password


def _row(member) -> dict:
    return {"id": str(member.id), "workspace": str(member.workspace_id), "email": member.email,
            "disabled": member.disabled_at is not None, "disabledAt": isoformat(member.disabled_at),
            "lastSignInAt": isoformat(member.last_sign_in_at), "createdAt": isoformat(member.created_at)}


def create(args, settings):
    password = _read_password(args)
    with database(settings).transaction() as session:
        member = members.create_member(session=session, workspace_id=parse_uuid(args.workspace), email=args.email, password=password)
        payload = {"id": str(member.id), "workspace": str(member.workspace_id), "email": member.email}
    emit(args, payload, f"Created member {payload['email']} ({payload['id']}); they sign in at /dashboard.")


def list_users(args, settings):
    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit must be 1 to 1000")
    workspace_id = parse_uuid(args.workspace) if args.workspace else None
    with database(settings).transaction() as session:
        rows = [_row(each) for each in members.list_members(session=session, workspace_id=workspace_id, limit=args.limit)]
    print_rows(args, "users", rows, ("id", "workspace", "email", "disabled", "lastSignInAt"))


def disable(args, settings):
    with database(settings).transaction() as session:
        row = _row(members.disable_member(session=session, member=args.member))
    emit(args, row, f"Disabled member {row['email']}: they cannot sign in, and their sessions have ended.")


def enable(args, settings):
    with database(settings).transaction() as session:
        row = _row(members.enable_member(session=session, member=args.member))
    emit(args, row, f"Enabled member {row['email']}: they can sign in again.")


def reset_password(args, settings):
    with database(settings).transaction() as session:
        member, password = members.reset_password(session=session, member=args.member)
        row = {**_row(member), "password": password}
    emit(args, row, f"New password for {row['email']} (shown this once; their sessions have ended):\n{password}")


def register(commands) -> None:
    actions = add_noun(commands, "user", help="dashboard members")
    command = add_workspace_command(
        actions, "create", help="add a member who signs in to the dashboard (asks for the password)", run=create
    )
    command.add_argument("--email", required=True)
    command.add_argument("--password-stdin", action="store_true", help="read the password from the first line of standard input")

    command = add_command(actions, "list", help="list members by email (of one workspace, or all)", run=list_users)
    command.add_argument("--workspace")
    command.add_argument("--limit", type=whole_number, default=100, help="at most this many, 1 to 1000 (default 100)")

    for name, run, what in (
        ("disable", disable, "stop a member signing in, and end their sessions"),
        ("enable", enable, "let a disabled member sign in again"),
        ("reset-password", reset_password, "give a member a new generated password, printed once (sessions end)"),
    ):
        command = add_command(actions, name, help=what, run=run)
        command.add_argument("member", metavar="ID_OR_EMAIL")
