"""`socialpub workspace create|list|show|update`: workspaces (tenants) and their plans."""
from __future__ import annotations

from socialpub.cli.common import OPERATOR, UsageError, add_command, add_noun, database, emit, isoformat, whole_number
from socialpub.cli.records import print_record, print_rows
from socialpub.scopes import PLANS
from socialpub.workspaces import service as workspaces


def _row(workspace) -> dict:
    return {"id": str(workspace.id), "name": workspace.name, "plan": workspace.plan,
            "createdAt": isoformat(workspace.created_at)}


def create(args, settings):
    with database(settings).transaction() as session:
        workspace = workspaces.create_workspace(session=session, name=args.name, plan=args.plan)
        payload = {"id": str(workspace.id), "name": workspace.name, "plan": workspace.plan}
    emit(args, payload, f"Created workspace {payload['id']} ({payload['name']}, {payload['plan']}).")


def list_workspaces(args, settings):
    if not 1 <= args.limit <= 1000:
        raise ValueError("--limit must be 1 to 1000")
    with database(settings).transaction() as session:
        rows = [_row(each) for each in workspaces.list_workspaces(session=session, plan=args.plan, limit=args.limit)]
    print_rows(args, "workspaces", rows, ("id", "plan", "name", "createdAt"))


def show(args, settings):
    with database(settings).transaction() as session:
        workspace = workspaces.get_workspace(session=session, workspace_id=args.workspace_id)
        counts = workspaces.overview(session=session, actor=OPERATOR, workspace_id=workspace.id)
        row = {**_row(workspace), "activeKeys": counts.active_keys, "activeAccounts": counts.active_accounts,
               "members": workspaces.member_count(session=session, workspace_id=workspace.id)}
    print_record(args, row)


def update(args, settings):
    if args.plan is None and args.name is None:
        raise UsageError("give --plan or --name")
    with database(settings).transaction() as session:
        workspace = workspaces.update_workspace(session=session, workspace_id=args.workspace_id, plan=args.plan,
                                                name=args.name)
        row = _row(workspace)
    emit(args, row, f"Workspace {row['id']} ({row['name']}) is on the {row['plan']} plan.")


def register(commands) -> None:
    actions = add_noun(commands, "workspace", help="workspaces (tenants)")
    command = add_command(actions, "create", help="create a workspace", run=create)
    command.add_argument("--name", required=True)
    command.add_argument("--plan", required=True, choices=PLANS)

    command = add_command(actions, "list", help="list the workspaces, newest first", run=list_workspaces)
    command.add_argument("--plan", choices=PLANS, help="only those on this plan")
    command.add_argument("--limit", type=whole_number, default=100, help="at most this many, 1 to 1000 (default 100)")

    command = add_command(actions, "show", help="show a workspace, with its active keys, accounts and members", run=show)
    command.add_argument("workspace_id", metavar="ID")

    command = add_command(actions, "update", help="change a workspace's plan (its keys follow at once) or name",
                          run=update)
    command.add_argument("workspace_id", metavar="ID")
    command.add_argument("--plan", choices=PLANS)
    command.add_argument("--name")
