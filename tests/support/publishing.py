"""Publishing as the workers would do it, for the tests of any area: a pipeline that
runs the dispatcher and its jobs, sandbox accounts that misbehave on request, and the
count of deliveries the sandbox accepted. A pytest plugin (tests/conftest.py)."""
import datetime as dt

import pytest
from sqlalchemy import func, select

from persistence.accounts import ConnectedAccount
from persistence.sandbox import SandboxCall
from persistence.types import utcnow
from socialpub.publishing import dispatch
from socialpub.publishing.jobs import SLICE_JOBS
from workers.queue import InlineQueue


class Pipeline:
    """Runs the dispatcher and its jobs to completion, as the workers would, at a
    chosen time."""

    def __init__(self, runtime, database):
        self.runtime = runtime
        self.database = database

    def run_jobs(self):
        """Runs what is queued now, as a worker would."""
        queue = self.runtime.queue
        if isinstance(queue, InlineQueue):
            queue.drain()
        else:
            from rq import SimpleWorker

            SimpleWorker([queue.queue], connection=queue.connection).work(burst=True)

    def run(self, *, at: dt.datetime | None = None, rounds: int = 10) -> int:
        handled = 0
        for _ in range(rounds):
            count = dispatch.dispatch_due(
                database=self.database, queue=self.runtime.queue, settings=self.runtime.settings,
                slice_jobs=SLICE_JOBS, now=at or utcnow(),
            )
            self.run_jobs()
            handled += count
            if count == 0:
                break
        return handled

    def later(self, **delta) -> dt.datetime:
        return utcnow() + dt.timedelta(**delta)


@pytest.fixture
def pipeline(app, db):
    runtime = app.app.extensions["socialpub"]
    if not isinstance(runtime.queue, InlineQueue):
        runtime.queue.queue.empty()
    return Pipeline(runtime, db)


@pytest.fixture
def sandbox_account(session, workspace):
    """Adds a sandbox account with chosen misbehaviour to the test mode."""

    def make(platform="twitter", handle="@flaky", **options):
        account = ConnectedAccount(
            workspace_id=workspace.id, livemode=False, platform=platform, connector="sandbox",
            handle=handle, status="active", options=options,
        )
        session.add(account)
        session.commit()
        return account

    return make


def deliveries(session, **criteria) -> int:
    query = select(func.count()).select_from(SandboxCall).where(SandboxCall.outcome == "accepted")
    for name, value in criteria.items():
        query = query.where(getattr(SandboxCall, name) == value)
    session.expire_all()
    return session.execute(query).scalar_one()
