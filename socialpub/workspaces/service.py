"""Workspaces: the tenant, with its plan."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.keys import ApiKey
from persistence.workspaces import Workspace
from socialpub.errors import ApiError
from socialpub.scopes import PLANS
from socialpub.accounts import service as accounts
from socialpub.tenancy import Actor, TenantScope


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
