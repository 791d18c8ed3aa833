"""Monitors, signals and reports for tests, made as the services store them."""
from __future__ import annotations

import datetime as dt
import itertools

from persistence.listening import ListeningMonitor, ListeningReport, ListeningSignal, ReportStatus
from socialpub.listening import signals
from socialpub.tenancy import TenantScope

_numbers = itertools.count(1)
POSTED_AT = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


def make_monitor(session, workspace, *, livemode: bool = False, name: str = "Acme brand", keywords=("acme",),
                 required_keywords=(), excluded_keywords=(), platforms=(), languages=(),
                 enabled: bool = True) -> ListeningMonitor:
    monitor = ListeningMonitor(
        workspace_id=workspace.id, livemode=livemode, name=name, keywords=list(keywords),
        required_keywords=list(required_keywords), excluded_keywords=list(excluded_keywords),
        platforms=list(platforms), languages=list(languages), enabled=enabled,
    )
    session.add(monitor)
    session.commit()
    return monitor


def signal_fields(**fields) -> dict:
    """A signal's fields by their domain names, as `signals.ingest` takes them."""
    values = dict(platform="mastodon", external_id=f"post-{next(_numbers)}", author="@ana", content="Hello Acme!",
                  url=None, language=None, reach=None, posted_at=POSTED_AT)
    values.update(fields)
    return values


def make_signal(session, workspace, *, livemode: bool = False, **fields) -> ListeningSignal:
    """A signal ingested as the poll would (scored and matched), committed."""
    scope = TenantScope.for_job(session, workspace.id, livemode, job="tests")
    [result] = signals.ingest(scope, [signal_fields(**fields)]).results
    session.commit()
    return result.signal


def make_report(session, workspace, *, livemode: bool = False, monitor: ListeningMonitor | None = None,
                status: str = ReportStatus.PENDING, since=POSTED_AT - dt.timedelta(days=7),
                until=POSTED_AT + dt.timedelta(days=1), **fields) -> ListeningReport:
    """A report as asked for (pending, no job holding it), committed."""
    monitor = monitor or make_monitor(session, workspace, livemode=livemode)
    report = ListeningReport(
        workspace_id=workspace.id, livemode=livemode, monitor_id=monitor.id, since=since, until=until, status=status,
        granularity="day" if until - since > dt.timedelta(hours=72) else "hour", attempts=0, **fields,
    )
    session.add(report)
    session.commit()
    return report
