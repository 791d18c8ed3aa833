"""`socialpub user create`: a dashboard member, who signs in with an email and password."""
from __future__ import annotations

import getpass
import sys

from socialpub.cli.common import UsageError, add_noun, add_workspace_command, database, emit, parse_uuid
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


def create(args, settings):
    password = _read_password(args)
    with database(settings).transaction() as session:
        member = members.create_member(session=session, workspace_id=parse_uuid(args.workspace), email=args.email, password=password)
        payload = {"id": str(member.id), "workspace": str(member.workspace_id), "email": member.email}
    emit(args, payload, f"Created member {payload['email']} ({payload['id']}); they sign in at /dashboard.")


def register(commands) -> None:
    actions = add_noun(commands, "user", help="dashboard members")
    command = add_workspace_command(
        actions, "create", help="add a member who signs in to the dashboard (asks for the password)", run=create
    )
    command.add_argument("--email", required=True)
    command.add_argument("--password-stdin", action="store_true", help="read the password from the first line of standard input")
