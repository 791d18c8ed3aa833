"""`socialpub demo` (what `make run` calls): a business-plan demo workspace with one
active test key that has every scope."""
from __future__ import annotations

from sqlalchemy import select

from persistence.workspaces import Workspace
from socialpub.cli.common import OPERATOR, add_command, database, emit
from socialpub.keys import service as api_keys
from socialpub.scopes import ALL_SCOPES
from socialpub.workspaces import service as workspaces

DEMO_WORKSPACE_NAME = "Demo workspace"
DEMO_KEY_NAME = "Demo test key"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def demo(args, settings):
    with database(settings).transaction() as session:
        workspace = session.execute(
            select(Workspace).where(Workspace.name == DEMO_WORKSPACE_NAME).order_by(Workspace.created_at)
        ).scalars().first()
        if workspace is None:
            workspace = workspaces.create_workspace(session=session, name=DEMO_WORKSPACE_NAME, plan="business")
        # Only a hash of a key's value is stored, so an earlier demo key cannot be
        # shown again: each run makes a new one and revokes the ones before it, which
        # leaves one active demo key however often `make run` is started.
        new_key, value = api_keys.create_api_key(
            session=session, actor=OPERATOR, workspace_id=workspace.id, name=DEMO_KEY_NAME, scopes=ALL_SCOPES, mode="test"
        )
        earlier = [
            key for key in api_keys.list_api_keys(session=session, actor=OPERATOR, workspace_id=workspace.id)
            if key.name == DEMO_KEY_NAME and key.revoked_at is None and key.id != new_key.id
        ]
        for key in earlier:
            api_keys.revoke_api_key(session=session, actor=OPERATOR, api_key_id=key.id, workspace_id=workspace.id)
        payload = {"workspace": str(workspace.id), "key": value}
    base = args.base_url.rstrip("/")
    lines = [
        f"Demo workspace {payload['workspace']}",
        f"Test key (every scope): {value}",
        f"Docs: {base}/docs",
        f"API reference: {base}/api/v1/ui/",
    ]
    if earlier:
        lines.append(f"Revoked the earlier demo key{'s' if len(earlier) > 1 else ''}: one demo key is active at a time.")
    emit(args, payload, "\n".join(lines))


def register(commands) -> None:
    command = add_command(
        commands, "demo", help="a business-plan demo workspace and a fresh test key with every scope (earlier demo keys are revoked)",
        run=demo,
    )
    command.add_argument(
        "--base-url", default=DEFAULT_BASE_URL,
        help=f"where the API is served, for the printed docs links (default: {DEFAULT_BASE_URL})",
    )
