"""Connected social accounts. Test mode publishes only to sandbox accounts, which every
workspace has for every platform."""
from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from persistence.models import ConnectedAccount
from socialpub.services.platforms import PLATFORMS
from socialpub.tenancy import TenantScope


def ensure_sandbox_accounts(*, session: Session, workspace_id: uuid.UUID) -> None:
    scope = TenantScope(session, workspace_id, livemode=False)
    existing = set(
        session.execute(
            scope.select(ConnectedAccount, ConnectedAccount.connector == "sandbox").with_only_columns(
                ConnectedAccount.platform
            )
        ).scalars()
    )
    for platform in PLATFORMS:
        if platform not in existing:
            scope.add(ConnectedAccount(platform=platform, connector="sandbox", handle=f"sandbox-{platform}", status="active"))


def platforms_without_active_account(*, scope: TenantScope, platforms) -> list[str]:
    """The named platforms on which the scope's workspace and mode have no active account."""
    covered = set(
        scope.session.execute(
            scope.select(
                ConnectedAccount,
                ConnectedAccount.status == "active",
                ConnectedAccount.platform.in_(list(platforms)),
            )
            .with_only_columns(ConnectedAccount.platform)
            .distinct()
        ).scalars()
    )
    return [platform for platform in platforms if platform not in covered]
