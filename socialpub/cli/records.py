"""The one pattern of the nouns that read and act on a workspace's records (`socialpub
post`, `feed`, `incident`, ...): a noun is a declaration (`Noun`), and this module
makes its commands.

    <noun> list --workspace ID [--mode test|live] [--limit N] [--json]
    <noun> show ID [--json]
    <noun> <action> ID [options] [--json]      (publish, cancel, pause, release, ...)

They call the API's own service functions in a scope of the record's workspace and
mode (`operator_scope`: `TenantScope.workspace` with the operator acting): the rules,
the 404 of another workspace's record and what the activity feed records are the
API's, and the feed says `operator <user>` did it. A table by default, one JSON document with
--json: a record is shown as the API shows it (its schema's dump). Bad input, a
refusal or an unknown id: one line on stderr and status 2 (socialpub.cli.main)."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from persistence.workspaces import Workspace
from socialpub.cli.common import MODES, OPERATOR, UsageError, add_command, add_noun, database, parse_uuid, whole_number
from socialpub.envelope import Page
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope

MAX_LIMIT = 100
BOTH_MODES = None


def operator_scope(session, workspace_id, livemode: bool | None) -> TenantScope:
    """The scope the operator calls a workspace's services in: one mode (or both,
    `None`, for listings), acting as the operator."""
    workspace = session.get(Workspace, workspace_id)
    if workspace is None:
        raise ApiError.not_found("workspace", workspace_id)
    return TenantScope.workspace(session, workspace.id, livemode, actor=OPERATOR)


@dataclass(frozen=True)
class Action:
    """`<noun> <name> ID`: `run(scope=, record_id=, args=, settings=)`
    does it through the service and returns the record (shown as `show` shows it) or,
    for a removal, the removed id (shown as `{"id": ..., "deleted": true}`)."""

    name: str
    help: str
    run: Callable
    done: str  # what the text says: "Published", "Paused", ...
    arguments: tuple = ()  # (flags, options) pairs for add_argument


@dataclass(frozen=True)
class Noun:
    name: str
    help: str
    # The record type and how to find its workspace and mode from its id alone (the
    # operator names a record by id: its workspace is its own).
    model: type
    resource: str
    # (scope=, limit=) -> the records; (scope=, record_id=) -> one.
    list_records: Callable
    show_record: Callable
    # A record as the API shows it, and the fields of it the table shows.
    dump: Callable
    columns: tuple[str, ...]
    plural: str = ""
    actions: tuple[Action, ...] = ()
    # Extra commands with their own arguments (analytics overview): register(actions).
    extra: Callable | None = None
    # More options of `list`: (flags, options) pairs, passed to list_records by their dest.
    list_arguments: tuple = ()

    @property
    def key(self) -> str:
        return self.plural or f"{self.name}s"

    def register(self, commands) -> None:
        actions = add_noun(commands, self.name, help=self.help)
        command = add_command(actions, "list", help=f"list a workspace's {self.key}, in the API's order", run=self._list)
        command.add_argument("--workspace", required=True)
        command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")
        command.add_argument("--limit", type=whole_number, default=20,
                             help=f"at most this many, 1 to {MAX_LIMIT} (default 20)")
        for flags, options in self.list_arguments:
            command.add_argument(*flags, **options)
        command = add_command(actions, "show", help=f"show one {self.resource}", run=self._show)
        command.add_argument("record_id", metavar="ID")
        for action in self.actions:
            command = add_command(actions, action.name, help=action.help, run=self._acting(action))
            command.add_argument("record_id", metavar="ID")
            for flags, options in action.arguments:
                command.add_argument(*flags, **options)
        if self.extra is not None:
            self.extra(actions)

    # -- the commands ---------------------------------------------------------------

    def _list(self, args, settings):
        if not 1 <= args.limit <= MAX_LIMIT:
            raise UsageError(f"--limit must be 1 to {MAX_LIMIT}")
        workspace_id = parse_uuid(args.workspace)
        livemode = BOTH_MODES if args.mode is None else args.mode == "live"
        dests = [dest_of(flags, options) for flags, options in self.list_arguments]
        extra = {dest: getattr(args, dest) for dest in dests}
        with database(settings).transaction() as session:
            scope = operator_scope(session, workspace_id, livemode)
            found = self.list_records(scope=scope, limit=args.limit, **extra)
            rows = [self.dump(record) for record in (found.items if isinstance(found, Page) else found)]
        print_rows(args, self.key, rows, self.columns)

    def _show(self, args, settings):
        with database(settings).transaction() as session:
            scope = self.scope_of(session, args.record_id)
            shown = self.show_record(scope=scope, record_id=args.record_id)
            row = shown if isinstance(shown, dict) else self.dump(shown)
        print_record(args, row)

    def _acting(self, action: Action):
        def run(args, settings):
            with database(settings).transaction() as session:
                scope = self.scope_of(session, args.record_id)
                result = action.run(scope=scope, record_id=args.record_id, args=args, settings=settings)
                row = {"id": result, "deleted": True} if isinstance(result, str) else self.dump(result)
            if getattr(args, "json", False):
                print(json.dumps(row, default=str))
            else:
                state = f" ({row['status']})" if "status" in row else ""
                print(f"{action.done} {self.resource} {row['id']}{state}.")
        return run

    def scope_of(self, session, record_id) -> TenantScope:
        record = session.get(self.model, parse_uuid(record_id))
        if record is None:
            raise ApiError.not_found(self.resource, record_id)
        return operator_scope(session, record.workspace_id, record.livemode)


def dest_of(flags, options) -> str:
    return options.get("dest") or flags[0].lstrip("-").replace("-", "_")


def scoped_get(model, resource: str) -> Callable:
    """`show_record` for a record the API lists but has no GET of its own: read through
    the scope, as every service reads, so the workspace and mode hold."""
    def get(*, scope, record_id):
        return scope.get(model, record_id, resource=resource)
    return get


def by_service(function, id_name: str, **fixed) -> Callable:
    """`show_record` or an action's `run` that is one service call (a `tenancy.scoped`
    service, in the operator's scope) with the record's id as `id_name` (`post_id=`)."""
    def call(*, scope, record_id, **_):
        return function.in_scope(scope, **{id_name: record_id}, **fixed)
    return call


def paged(function, **fixed) -> Callable:
    """`list_records` from a (`tenancy.scoped`) service that pages (limit, offset): its
    first page."""
    def call(*, scope, limit, **filters):
        return function.in_scope(scope, limit=limit, offset=0, **fixed, **filters)
    return call


# -- output -----------------------------------------------------------------------------

def cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ",".join(cell(each) for each in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    text = " ".join(str(value).split())
    return text if len(text) <= 60 else text[:59] + "…"


def print_rows(args, key: str, rows: list[dict], columns: tuple[str, ...]) -> None:
    """One JSON document (`{key: rows}`) with --json; else a table of `columns`."""
    if getattr(args, "json", False):
        print(json.dumps({key: rows}, default=str))
        return
    if not rows:
        print(f"No {key}.")
        return
    table = [list(columns)] + [[cell(row.get(column)) for column in columns] for row in rows]
    widths = [max(len(line[index]) for line in table) for index in range(len(columns))]
    for line in table:
        print("  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip())


def print_record(args, row: dict) -> None:
    """One JSON document with --json; else a line per field."""
    if getattr(args, "json", False):
        print(json.dumps(row, default=str))
        return
    width = max(len(name) for name in row)
    for name, value in row.items():
        print(f"{name.ljust(width)}  {cell(value) if not isinstance(value, str) else value}")
