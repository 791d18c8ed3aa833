"""The listening area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.listening import ListeningMonitor
from tests.listening.factories import make_monitor
from tests.support.contract import RecordFactory


def _monitor(session, workspace, livemode):
    return make_monitor(session, workspace, livemode=livemode).id


def _find_enabled_monitor(session, monitor_id):
    # Still enabled: a refused toggle must not have paused it.
    return session.execute(
        select(ListeningMonitor).where(ListeningMonitor.id == monitor_id, ListeningMonitor.enabled.is_(True))
    ).scalar_one_or_none()


RECORD_FACTORIES = {
    "monitorId": RecordFactory(make=_monitor, find=_find_enabled_monitor),
}
