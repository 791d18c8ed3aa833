"""Handlers of the `accounts` tag."""
from socialpub import envelope
from socialpub.request import current_principal, current_session
from socialpub.accounts.schemas import AccountSchema
from socialpub.accounts import service as account_service

account_schema = AccountSchema()


def list_accounts(platform=None, status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = account_service.list_accounts(
        session=current_session(), principal=current_principal(), platform=platform, status=status,
        limit=limit, offset=offset,
    )
    return envelope.page(result, lambda accounts: account_schema.dump(accounts, many=True))


def get_account(account_id):
    account = account_service.get_account(session=current_session(), principal=current_principal(), account_id=account_id)
    return envelope.ok(account_schema.dump(account))
