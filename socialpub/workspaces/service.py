"""Workspaces: the tenant, with its plan."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.keys import ApiKey
from persistence.members import Member
from persistence.workspaces import Workspace
from socialpub.errors import ApiError
from socialpub.scopes import PLANS
from socialpub import keycache
from socialpub.accounts import service as accounts
from socialpub.keys import service as keys
from socialpub.tenancy import Actor, TenantScope
from socialpub.tenancy import require_workspace as require_id


def create_workspace(*, session: Session, name: str, plan: str) -> Workspace:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ApiError.field_invalid("name", "A workspace needs a name of 1 to 200 characters.")
    if plan not in PLANS:
        raise ApiError.field_invalid("plan", f"plan must be one of {', '.join(PLANS)}.")
    workspace = Workspace(name=name, plan=plan)
    session.add(workspace)
    session.flush()
    # Test mode always has somewhere to publish: a developer's first scheduled post works.
    accounts.ensure_sandbox_accounts(session=session, workspace_id=workspace.id)
    session.commit()
    return workspace


@dataclass(frozen=True)
class Overview:
    active_keys: int
    active_accounts: int


def overview(*, session: Session, actor: Actor, workspace_id) -> Overview:
    """What the dashboard's landing page counts: keys not revoked and accounts that
    can publish, both modes."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    return Overview(
        active_keys=scope.count(ApiKey, ApiKey.revoked_at.is_(None)),
        active_accounts=scope.count(ConnectedAccount, ConnectedAccount.status == AccountStatus.ACTIVE),
    )


def list_workspaces(*, session: Session, plan: str | None = None, limit: int = 100) -> list[Workspace]:
    """Every workspace, newest first (the operator's view across tenants)."""
    criteria = [] if plan is None else [Workspace.plan == plan]
    query = select(Workspace).where(*criteria).order_by(Workspace.created_at.desc(), Workspace.id.desc())
    return list(session.execute(query.limit(limit)).scalars())


def get_workspace(*, session: Session, workspace_id) -> Workspace:
    workspace = session.get(Workspace, require_id(workspace_id))
    if workspace is None:
        raise ApiError.not_found("workspace", workspace_id)
    return workspace


def update_workspace(*, session: Session, workspace_id, plan: str | None = None, name: str | None = None) -> Workspace:
    """A new plan (or name). Keys answer by the new plan at once: the key revision moves,
    so no process serves a cached principal with the old one."""
    workspace = get_workspace(session=session, workspace_id=workspace_id)
    if name is not None:
        name = name.strip()
        if not name or len(name) > 200:
            raise ApiError.field_invalid("name", "A workspace needs a name of 1 to 200 characters.")
        workspace.name = name
    revision = None
    if plan is not None:
        if plan not in PLANS:
            raise ApiError.field_invalid("plan", f"plan must be one of {', '.join(PLANS)}.")
        if plan != workspace.plan:
            workspace.plan = plan
            revision = keys.move_revision(session)
    session.commit()
    if revision is not None:
        keycache.revision_moved(revision)
    return workspace


def member_count(*, session: Session, workspace_id) -> int:
    return session.execute(select(func.count()).select_from(Member).where(Member.workspace_id == workspace_id)).scalar_one()
