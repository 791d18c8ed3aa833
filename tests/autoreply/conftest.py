"""A poller that runs the notifications poll as the workers do: the dispatcher's
enrol-and-claim, then each claimed account's poll job, at a given time."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from persistence.sandbox import SandboxCall
from persistence.autoreply import AutoReplyMessage
from socialpub.accounts import service as accounts
from socialpub.autoreply import polling
from socialpub.connectors.registry import connector_for
from socialpub.connectors.sandbox import SandboxConnector
from socialpub.outbound import Allowlist, GuardedClient

START = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


class _Jobs:
    """Takes what the dispatcher hands out, for the test to run."""

    def __init__(self):
        self.handed: list[tuple] = []

    def enqueue(self, function, *args, job_id=None):
        self.handed.append(args)


class Poller:
    def __init__(self, db, settings):
        self.db, self.settings = db, settings
        self.now = START

    def connectors(self, name: str):
        if name == "sandbox":
            return SandboxConnector(database=self.db)
        return connector_for(name, GuardedClient(allowlist=Allowlist.parse("127.0.0.1")))

    def run(self) -> dict[str, int]:
        """One scheduler tick and every poll it hands out; then the clock moves on a poll interval."""
        jobs = _Jobs()
        polling.dispatch_polls(database=self.db, queue=jobs, settings=self.settings, run=None, now=self.now)
        totals = {"polled": 0, "read": 0, "replied": 0, "unanswered": 0, "own": 0, "failed": 0}
        for cursor_id, token in jobs.handed:
            result = polling.poll_account(database=self.db, settings=self.settings, connector_for=self.connectors,
                                          cursor_id=cursor_id, token=token, now=self.now)
            totals["polled"] += 1
            for name, count in result.items():
                totals[name] += count
        self.now += dt.timedelta(seconds=self.settings.autoreply_poll_interval_seconds)
        return totals

    def publish_on_sandbox(self, account, content: str, key: str):
        """A post the sandbox accepted for the account (as the publishing pipeline leaves one)."""
        return SandboxConnector(database=self.db).publish(accounts.credentials_for(account), content, idempotency_key=key)


@pytest.fixture
def poller(db, settings):
    return Poller(db, settings)


def messages(session) -> list[AutoReplyMessage]:
    session.expire_all()
    return list(session.execute(select(AutoReplyMessage).order_by(AutoReplyMessage.created_at,
                                                                  AutoReplyMessage.external_id)).scalars())


def sandbox_replies(session, account) -> list[SandboxCall]:
    session.expire_all()
    return list(session.execute(select(SandboxCall).where(
        SandboxCall.account_id == account.id, SandboxCall.kind == "reply")).scalars())
