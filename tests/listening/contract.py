"""The listening area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.listening import ListeningMonitor, ListeningReport, ReportStatus
from tests.listening.factories import make_monitor, make_report
from tests.support.contract import RecordFactory, SuccessRequest


def _monitor(session, workspace, livemode):
    return make_monitor(session, workspace, livemode=livemode).id


def _find_enabled_monitor(session, monitor_id):
    # Still enabled: a refused toggle must not have paused it.
    return session.execute(
        select(ListeningMonitor).where(ListeningMonitor.id == monitor_id, ListeningMonitor.enabled.is_(True))
    ).scalar_one_or_none()


def _report(session, workspace, livemode):
    return make_report(session, workspace, livemode=livemode).id


def _find_pending_report(session, report_id):
    return session.execute(
        select(ListeningReport).where(ListeningReport.id == report_id, ListeningReport.status == ReportStatus.PENDING)
    ).scalar_one_or_none()


def _report_on_a_monitor(session, workspace):
    monitor = make_monitor(session, workspace)
    return SuccessRequest(body={"monitorId": str(monitor.id), "from": "2026-11-01T00:00:00Z",
                                "to": "2026-11-27T00:00:00Z"})


RECORD_FACTORIES = {
    "monitorId": RecordFactory(make=_monitor, find=_find_enabled_monitor),
    "reportId": RecordFactory(make=_report, find=_find_pending_report),
}

SUCCESS_REQUESTS = {
    "listening.generate_listening_report": _report_on_a_monitor,
}
