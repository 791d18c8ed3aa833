"""`socialpub workspace create`."""
from __future__ import annotations

from socialpub.cli.common import add_command, add_noun, database, emit
from socialpub.scopes import PLANS
from socialpub.workspaces import service as workspaces


def create(args, settings):
    with database(settings).transaction() as session:
        workspace = workspaces.create_workspace(session=session, name=args.name, plan=args.plan)
        payload = {"id": str(workspace.id), "name": workspace.name, "plan": workspace.plan}
    emit(args, payload, f"Created workspace {payload['id']} ({payload['name']}, {payload['plan']}).")


def register(commands) -> None:
    actions = add_noun(commands, "workspace", help="workspaces (tenants)")
    command = add_command(actions, "create", help="create a workspace", run=create)
    command.add_argument("--name", required=True)
    command.add_argument("--plan", required=True, choices=PLANS)
