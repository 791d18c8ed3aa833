"""The sandbox platform: each idempotency key is accepted once and a repeat gets the
first receipt, yet every call it receives leaves a row, so a test can count what a
platform without idempotency keys would have received twice."""
import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.sandbox import SandboxCall
from socialpub.connectors.base import AccountCredentials, PlatformError
from socialpub.connectors.sandbox import SandboxConnector


@pytest.fixture
def account(session, workspace):
    def make(**options):
        row = ConnectedAccount(workspace_id=workspace.id, livemode=False, platform="twitter", connector="sandbox",
                               handle="@calls", status="active", options=options)
        session.add(row)
        session.commit()
        return AccountCredentials(account_id=str(row.id), platform="twitter", handle="@calls", options=options, secrets={})

    return make


def calls(session, key):
    session.expire_all()
    rows = session.execute(select(SandboxCall.outcome, SandboxCall.external_id).where(SandboxCall.idempotency_key == key))
    return sorted(tuple(row) for row in rows)


def test_a_repeat_gets_the_first_receipt_and_is_recorded(db, session, account):
    sandbox, credentials = SandboxConnector(db), account()
    first = sandbox.publish(credentials, "Hello", idempotency_key="key-1")
    again = sandbox.publish(credentials, "Hello", idempotency_key="key-1")
    assert again == first
    assert calls(session, "key-1") == [("accepted", first.external_id), ("repeated", first.external_id)]


def test_repeats_are_recorded_for_an_account_that_misbehaves_too(db, session, account):
    sandbox, credentials = SandboxConnector(db), account(failTransient=1)
    with pytest.raises(PlatformError):
        sandbox.publish(credentials, "Hello", idempotency_key="key-2")
    receipt = sandbox.publish(credentials, "Hello", idempotency_key="key-2")
    assert sandbox.publish(credentials, "Hello", idempotency_key="key-2") == receipt
    assert calls(session, "key-2") == [("accepted", receipt.external_id), ("repeated", receipt.external_id),
                                       ("transient", None)]


def test_a_direct_message_is_a_call_of_its_own_kind_once_per_key(db, session, account):
    sandbox, credentials = SandboxConnector(db), account()
    first = sandbox.send_dm(credentials, to_handle="ana@mastodon.social", text="Hi Ana", idempotency_key="dm-1")
    assert sandbox.send_dm(credentials, to_handle="ana@mastodon.social", text="Hi Ana", idempotency_key="dm-1") == first
    session.expire_all()
    [content] = session.execute(select(SandboxCall.content).where(SandboxCall.kind == "dm",
                                                                  SandboxCall.outcome == "accepted")).scalars()
    assert content == "@ana@mastodon.social Hi Ana"
