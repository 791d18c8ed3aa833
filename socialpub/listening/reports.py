"""Reports: asking for one on a monitor's signals over a window, listing and reading
them. A new report is saved `pending` and handed at once to a build job
(socialpub.listening.building, which also says how a report is built and what the
sweep does for a build that was lost)."""
from __future__ import annotations

import datetime as dt

from persistence.listening import ListeningMonitor, ListeningReport, ReportStatus
from socialpub.envelope import Page, paginate, status_filter
from socialpub.listening.building import request_build
from socialpub.listening.jobs import build_report
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import TenantScope, parse_id

MAX_WINDOW = dt.timedelta(days=366)
# A window up to this long is counted by hour, a longer one by UTC day.
HOURLY_UP_TO = dt.timedelta(hours=72)


def granularity_of(since: dt.datetime, until: dt.datetime) -> str:
    return "hour" if until - since <= HOURLY_UP_TO else "day"


def checked_window(since, until) -> tuple[dt.datetime, dt.datetime]:
    since, until = parse_timestamp(since, "from"), parse_timestamp(until, "to")
    if since is None or until is None:
        raise ApiError.field_invalid("from" if since is None else "to", "from and to are both required.")
    if since >= until:
        raise ApiError.field_invalid("from", "from must be before to.")
    if until - since > MAX_WINDOW:
        raise ApiError.field_invalid("to", f"A report covers at most {MAX_WINDOW.days} days; from and to are "
                                           f"{(until - since).days} days apart.")
    return since, until


def _monitor(scope: TenantScope, monitor_id) -> ListeningMonitor:
    parsed = parse_id(monitor_id)
    monitor = None
    if parsed is not None:
        monitor = scope.session.execute(
            scope.select(ListeningMonitor, ListeningMonitor.id == parsed)
        ).scalar_one_or_none()
    if monitor is None:
        raise ApiError.field_invalid("monitor_id", f"No listening monitor with id '{monitor_id}'.")
    return monitor


def generate_report(*, session, principal: Principal, database, queue, settings, monitor_id, since,
                    until) -> ListeningReport:
    """A new report, `pending`, handed to a build job."""
    scope = TenantScope.of(session, principal)
    since, until = checked_window(since, until)
    monitor = _monitor(scope, monitor_id)
    report = ListeningReport(
        monitor_id=monitor.id, since=since, until=until, status=ReportStatus.PENDING,
        granularity=granularity_of(since, until), attempts=0,
    )
    scope.add(report)
    session.flush()
    request_build(session, database=database, queue=queue, settings=settings, report_id=report.id, run=build_report)
    # As it was accepted: pending (its job may have finished it already).
    return report


def list_reports(*, session, principal: Principal, monitor_id=None, status: str | None = None, limit: int = 20,
                 offset: int = 0) -> Page:
    """Newest first. A monitor of another workspace or mode, or no monitor, lists none."""
    scope = TenantScope.of(session, principal)
    criteria = status_filter(ListeningReport.status, status, ReportStatus)
    if monitor_id is not None:
        criteria.append(ListeningReport.monitor_id == parse_id(monitor_id))
    query = scope.select(ListeningReport, *criteria).order_by(
        ListeningReport.created_at.desc(), ListeningReport.id.desc()
    )
    return paginate(session, query, total=scope.count_query(ListeningReport, *criteria), limit=limit, offset=offset)


def get_report(*, session, principal: Principal, report_id) -> ListeningReport:
    return TenantScope.of(session, principal).get(ListeningReport, report_id, resource="report")
