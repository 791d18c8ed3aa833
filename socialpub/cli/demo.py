"""`socialpub demo` (what `make run` calls): a business-plan demo workspace with one
active test key that has every scope, and a dashboard member of it (demo@example.com)
with a new password each run, so the dashboard is usable from the first command."""
from __future__ import annotations

import secrets

from sqlalchemy import select

from persistence.workspaces import Workspace
from socialpub.cli.common import OPERATOR, add_command, database, emit
from socialpub.errors import ApiError
from socialpub.keys import service as api_keys
from socialpub.members import service as members
from socialpub.scopes import ALL_SCOPES
from socialpub.workspaces import service as workspaces

DEMO_WORKSPACE_NAME = "Demo workspace"
DEMO_KEY_NAME = "Demo test key"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEMO_MEMBER_EMAIL = "demo@example.com"


def demo_member(session, workspace) -> tuple[str, str] | None:
    """(email, password) of the demo workspace's dashboard member: made on the first
    run; on later runs given a new password (only its hash is stored, so the one
    printed before cannot be shown again; its sessions end) and enabled again. None
    when the address belongs to a member of another workspace, who is left alone."""
    try:
        member = members.find_member(session=session, member=DEMO_MEMBER_EMAIL)
    except ApiError:
        password = secrets.token_urlsafe(members.GENERATED_PASSWORD_BYTES)
        members.create_member(session=session, workspace_id=workspace.id, email=DEMO_MEMBER_EMAIL, password=password)
        return DEMO_MEMBER_EMAIL, password
    if member.workspace_id != workspace.id:
        return None
    members.enable_member(session=session, member=str(member.id))
    member, password = members.reset_password(session=session, member=str(member.id))
    return member.email, password


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
        member = demo_member(session, workspace)
        payload = {"workspace": str(workspace.id), "key": value,
                   "member": {"email": member[0], "password": member[1]} if member else None}
    base = args.base_url.rstrip("/")
    lines = [
        f"Demo workspace {payload['workspace']}",
        f"Test key (every scope): {value}",
        f"Docs: {base}/docs",
        f"API reference: {base}/api/v1/ui/",
        f"Dashboard: {base}/dashboard/",
    ]
    if member:
        lines += [f"  Email: {member[0]}", f"  Password: {member[1]} (a new one each run)"]
    else:
        lines.append(f"  {DEMO_MEMBER_EMAIL} is a member of another workspace: no demo member was made.")
    if earlier:
        lines.append(f"Revoked the earlier demo key{'s' if len(earlier) > 1 else ''}: one demo key is active at a time.")
    emit(args, payload, "\n".join(lines))


def register(commands) -> None:
    command = add_command(
        commands, "demo", help="a business-plan demo workspace, a fresh test key with every scope (earlier demo keys are revoked) and "
             "a dashboard member with a new password",
        run=demo,
    )
    command.add_argument(
        "--base-url", default=DEFAULT_BASE_URL,
        help=f"where the API is served, for the printed docs links (default: {DEFAULT_BASE_URL})",
    )
