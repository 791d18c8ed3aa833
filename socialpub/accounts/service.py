"""Connected social accounts. Test mode publishes only to sandbox accounts, which every
workspace has for every platform."""
from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.workspaces import Workspace
from socialpub import clock, crypto
from socialpub.connectors.base import AccountCredentials
from socialpub.connectors.registry import connector_for
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.platforms import PLATFORMS
from socialpub.tenancy import Actor, TenantScope, parse_id

# Which connectors can serve which platform. The sandbox stands in for all of them.
CONNECTORS_BY_PLATFORM = {
    "mastodon": ("mastodon",),
    "bluesky": ("bluesky",),
    "telegram": ("telegram",),
    "discord": ("discord",),
}


# Who provisions a new workspace's sandbox accounts: the service itself.
SETUP = Actor.job("workspace setup")


def ensure_sandbox_accounts(*, session: Session, workspace_id: uuid.UUID) -> None:
    scope = TenantScope.workspace(session, workspace_id, livemode=False, actor=SETUP)
    existing = set(
        session.execute(
            scope.select(ConnectedAccount, ConnectedAccount.connector == "sandbox").with_only_columns(
                ConnectedAccount.platform
            )
        ).scalars()
    )
    for platform in PLATFORMS:
        if platform not in existing:
            scope.add(ConnectedAccount(platform=platform, connector="sandbox", handle=f"sandbox-{platform}", status=AccountStatus.ACTIVE, options={}))


def platforms_without_active_account(*, scope: TenantScope, platforms) -> list[str]:
    """The named platforms on which the scope's workspace and mode have no active account."""
    covered = _active_by_platform(scope)
    return [platform for platform in platforms if platform not in covered]


def active_accounts(*, scope: TenantScope, platforms) -> list[ConnectedAccount]:
    """The active accounts on the named platforms, by platform, oldest first."""
    by_platform = _active_by_platform(scope)
    return [account for platform in sorted(set(platforms)) for account in by_platform.get(platform, [])]


def _active_by_platform(scope: TenantScope) -> dict[str, list[ConnectedAccount]]:
    """Every active account of the scope, read once per scope (a workspace has a few
    dozen at most): a bulk chunk scheduling fifty posts reads them once, not fifty times."""

    def read():
        query = scope.select(ConnectedAccount, ConnectedAccount.status == AccountStatus.ACTIVE).order_by(
            ConnectedAccount.platform, ConnectedAccount.created_at
        )
        by_platform: dict[str, list[ConnectedAccount]] = {}
        for account in scope.session.execute(query).scalars():
            by_platform.setdefault(account.platform, []).append(account)
        return by_platform

    return scope.remember("active_accounts", read)


def list_accounts(*, session: Session, principal, platform=None, status=None, limit=20, offset=0) -> Page:
    scope = TenantScope.of(session, principal)
    criteria = []
    if platform is not None:
        criteria.append(ConnectedAccount.platform == platform)
    if status is not None:
        criteria.append(ConnectedAccount.status == status)
    query = scope.select(ConnectedAccount, *criteria).order_by(
        ConnectedAccount.platform, ConnectedAccount.created_at, ConnectedAccount.id
    )
    return paginate(session, query, total=scope.count_query(ConnectedAccount, *criteria), limit=limit, offset=offset)


def workspace_accounts(*, session: Session, actor: Actor, workspace_id, livemode: bool | None = None) -> list[ConnectedAccount]:
    """Every account of a workspace, for operators (CLI, dashboard), both modes unless
    one is named: test mode's first, then live's, each by platform."""
    scope = TenantScope.workspace(session, workspace_id, livemode, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    query = scope.select(ConnectedAccount).order_by(
        ConnectedAccount.livemode, ConnectedAccount.platform, ConnectedAccount.created_at
    )
    return list(session.execute(query).scalars())


def get_account(*, session: Session, principal, account_id) -> ConnectedAccount:
    return TenantScope.of(session, principal).get(ConnectedAccount, account_id, resource="account")


def connect_account(
    *, session: Session, actor: Actor, workspace_id, platform: str, mode: str, connector: str, handle: str,
    options: dict | None = None, secrets: dict | None = None,
) -> ConnectedAccount:
    """Validates the connector's settings, encrypts the secrets, saves the account."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    if platform not in PLATFORMS:
        raise ApiError.field_invalid("platform", f"platform must be one of {', '.join(PLATFORMS)}.")
    if mode not in ("live", "test"):
        raise ApiError.field_invalid("mode", "mode must be 'live' or 'test'.")
    if mode == "test" and connector != "sandbox":
        raise ApiError.field_invalid("connector", "Test mode never reaches a real platform: use the sandbox connector.")
    if mode == "live" and connector == "sandbox":
        # A live post "published" to the sandbox would reach no one while saying it went out.
        raise ApiError.field_invalid(
            "connector", f"Live mode publishes to the real platform: connect {platform} with its own connector, not the sandbox."
        )
    if connector != "sandbox" and connector not in CONNECTORS_BY_PLATFORM.get(platform, ()):
        raise ApiError.field_invalid("connector", f"No {connector} connector for {platform}.")
    handle = (handle or "").strip()
    if not handle or len(handle) > 200:
        raise ApiError.field_invalid("handle", "An account needs a handle of 1 to 200 characters.")
    options, secrets = dict(options or {}), dict(secrets or {})
    try:
        connector_for(connector).validate(options, secrets)
    except (KeyError, ValueError) as exc:
        raise ApiError.field_invalid("options", str(exc).strip("'\"")) from None
    account = scope.add(
        ConnectedAccount(
            platform=platform, connector=connector, handle=handle, status=AccountStatus.ACTIVE, options=options,
            secrets_encrypted=crypto.encrypt_json(secrets) if secrets else None,
        ),
        livemode=mode == "live",
    )
    session.commit()
    return account


def workspace_of_account(*, session: Session, account_id) -> uuid.UUID:
    """The workspace an account belongs to, or 404: for operators (the CLI), who name
    an account by its id alone and then act on it in its workspace."""
    parsed = parse_id(account_id)
    workspace_id = None
    if parsed is not None:
        workspace_id = session.execute(
            select(ConnectedAccount.workspace_id).where(ConnectedAccount.id == parsed)
        ).scalar_one_or_none()
    if workspace_id is None:
        raise ApiError.not_found("account", account_id)
    return workspace_id


def disable_account(*, session: Session, actor: Actor, workspace_id, account_id) -> ConnectedAccount:
    """Another workspace's account is not found, so its id leaks nothing."""
    account = TenantScope.workspace(session, workspace_id, actor=actor).get(ConnectedAccount, account_id, resource="account")
    account.status = AccountStatus.DISABLED
    account.status_reason = "Disconnected by the workspace."
    session.commit()
    return account


def credentials_for(account: ConnectedAccount) -> AccountCredentials:
    return AccountCredentials(
        account_id=str(account.id), platform=account.platform, handle=account.handle,
        options=dict(account.options or {}), secrets=crypto.decrypt_json(account.secrets_encrypted),
    )


def mark_needs_reauth(account: ConnectedAccount, reason: str) -> None:
    account.status = AccountStatus.NEEDS_REAUTH
    account.status_reason = reason[:1000]


def token_refused(account: ConnectedAccount, reason: str) -> bool:
    """A platform refused the account's access token. An account connected through
    OAuth with a refresh token is due for a refresh now (socialpub.accounts.oauth),
    and True says a call may be tried again after it; any other account needs to be
    connected again (marked so; False)."""
    if account.refresh_due_at is not None and account.status == AccountStatus.ACTIVE:
        account.refresh_due_at = min(account.refresh_due_at, clock.now())
        return True
    mark_needs_reauth(account, reason)
    return False
