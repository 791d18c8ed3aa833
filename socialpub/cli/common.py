"""What every command module shares: the one-line usage error, the parser that raises
it, the output printer, the database handle, the argument types, and who acts (the
operator, by the name of the user running the command)."""
from __future__ import annotations

import argparse
import getpass
import json
import uuid

from persistence.db import Database
from persistence.workspaces import Workspace
from socialpub.config import Settings
from socialpub.errors import ApiError
from socialpub.tenancy import Actor

MODES = ("test", "live")


def _operator() -> Actor:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name in this environment
        user = None
    return Actor.operator(user)


# Who the services see acting when a command changes or reads a workspace's records.
OPERATOR = _operator()


class UsageError(Exception):
    """Bad input: main() prints it as one line on stderr and exits with status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        raise UsageError(message)


def add_noun(commands, name: str, *, help: str):
    """A top-level command whose actions are subcommands (`socialpub key create`)."""
    return commands.add_parser(name, help=help, description=help).add_subparsers(
        dest="action", required=True, parser_class=Parser
    )


def add_command(actions, name: str, *, help: str, run, json_output: bool = True, **kwargs) -> Parser:
    """One command: `run(args, settings)` does it; with `json_output` it takes --json."""
    command = actions.add_parser(name, help=help, description=kwargs.pop("description", help), **kwargs)
    if json_output:
        command.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    command.set_defaults(run=run)
    return command


def add_workspace_command(actions, name: str, *, help: str, run, **kwargs) -> Parser:
    """A command about one workspace's records: it takes the workspace's id as --workspace."""
    command = add_command(actions, name, help=help, run=run, **kwargs)
    command.add_argument("--workspace", required=True)
    return command


def emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload) if getattr(args, "json", False) else text)


def emit_gone(args, record, state: str, noun: str) -> None:
    """A record that is gone for good (`revoked`, `deleted`): its id and that state."""
    emit(args, {"id": str(record.id), state: True}, f"{state.capitalize()} {noun} {record.id}.")


def database(settings: Settings) -> Database:
    # The service's deadlines: a command waits on a lock held elsewhere a bounded time.
    return Database.from_settings(settings)


def parse_uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise UsageError(f"not an id: {value!r}") from None


def require_workspace(session, workspace_id: uuid.UUID) -> None:
    """For listings: a mistyped workspace id is an error, not an empty list."""
    if session.get(Workspace, workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)


def whole_number(value: str) -> int:
    """An argparse type. The range is the service's to check, so its message names it."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None


def mode_name(livemode: bool) -> str:
    return "live" if livemode else "test"


def isoformat(value) -> str | None:
    return value.isoformat() if value is not None else None
