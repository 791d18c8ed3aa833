"""The accounts area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.accounts import AccountStatus, ConnectedAccount
from tests.support.contract import RecordFactory


def _account(session, workspace, livemode):
    account = ConnectedAccount(
        workspace_id=workspace.id, livemode=livemode, platform="mastodon", connector="sandbox",
        handle="@isolated", status=AccountStatus.ACTIVE, options={},
    )
    session.add(account)
    session.commit()
    return account.id


def _find_account(session, account_id):
    return session.execute(select(ConnectedAccount).where(ConnectedAccount.id == account_id)).scalar_one_or_none()


RECORD_FACTORIES = {
    "accountId": RecordFactory(make=_account, find=_find_account),
}
