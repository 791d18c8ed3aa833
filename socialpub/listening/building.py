"""Building reports: what a report's job reads and fills in, and how pending reports
reach it.

A report is handed to its job claimed (a lease and a token, `claims.claim`) and
queued (`claims.hand_out`): at once when it is asked for (`request_build`, in the
request's transaction, its job queued once that commits), and by
the sweep (`dispatch_pending`, periodic) when no job holds it (never queued, the
queue refused it, or its job died and the lease ran out). Each claim counts an
attempt; a report claimed MAX_ATTEMPTS times without being built is `failed`,
its reason saying so, rather than tried for ever.

The job (`build_report`) reads, in one read of the database, the signals its
monitor matched posted in the window, through the monitor links' index by monitor
and time, streamed in batches: one pass counts the volume by hour (windows up to 72
hours) or UTC day, the sentiment split and mean score, the top authors and the top
keywords (socialpub.listening.terms). Then one transaction fills the report, sets
`share_of_voice` to [] and announces it (`changes.REPORTS`, `built`: an area that
tracks competitors fills share of voice then), and marks it `ready`, while its
lease is still the job's. Any failure on the way makes the report `failed` with the
reason; a job whose lease was taken meanwhile leaves the report alone.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections import Counter
from typing import Callable

from sqlalchemy import and_, or_, select, update

from persistence.listening import ListeningMonitor, ListeningReport, ReportStatus, SentimentLabel
from persistence.listening import ListeningSignal as Signal
from persistence.listening import ListeningSignalMonitor as SignalMonitor
from socialpub import claims, clock
from socialpub.listening.changes import REPORTS
from socialpub.listening.terms import TermCounter, excluded_words
from socialpub.serialization import UtcTimestamp
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.listening")

MAX_ATTEMPTS = 3
SWEEP_BATCH = 100
JOB_NAME = "listening-report"
TOP_AUTHORS = 10
TOP_KEYWORDS = 20
READ_BATCH = 2000
WIDTHS = {"hour": dt.timedelta(hours=1), "day": dt.timedelta(days=1)}
_STAMP = UtcTimestamp()


# --- handing reports to the job -----------------------------------------------------------


def _free(now):
    return or_(ListeningReport.lease_until.is_(None), ListeningReport.lease_until < now)


def _lease(settings, now, token: str) -> dict:
    return {"lease_until": now + dt.timedelta(seconds=settings.listening_report_lease_seconds),
            "claim_token": token, "attempts": ListeningReport.attempts + 1}


def request_build(session, *, database, queue, settings, report_id, run: Callable) -> bool:
    """Claims a pending report in `session` (the request's, which it commits) and
    queues `run(report_id, token)` as the sweep does; False when a job holds it."""
    now = clock.now()
    token = str(uuid.uuid4())
    due = and_(ListeningReport.id == report_id, ListeningReport.status == ReportStatus.PENDING, _free(now))
    claimed = claims.claim(session, ListeningReport, due, values=_lease(settings, now, token), of=ListeningReport)
    session.commit()
    if not claimed:
        return False
    return claims.hand_out(database=database, queue=queue, run=run, model=ListeningReport, claimed=claimed,
                           token=token, job_name=JOB_NAME) == 1


def dispatch_pending(*, database, queue, settings, run: Callable, now=None) -> int:
    """Queues again each pending report no job holds, and fails those claimed
    MAX_ATTEMPTS times already. Returns how many were queued."""
    now = now or clock.now()
    token = str(uuid.uuid4())
    pending = and_(ListeningReport.status == ReportStatus.PENDING, _free(now))
    with database.transaction() as session:
        session.execute(
            update(ListeningReport)
            .where(pending, ListeningReport.attempts >= MAX_ATTEMPTS)
            .values(status=ReportStatus.FAILED, completed_at=now, lease_until=None, claim_token=None,
                    failure_reason=f"The report could not be built: its build was interrupted {MAX_ATTEMPTS} times.")
            .execution_options(synchronize_session=False)
        )
        claimed = claims.claim(
            session, ListeningReport, and_(pending, ListeningReport.attempts < MAX_ATTEMPTS),
            values=_lease(settings, now, token), order_by=ListeningReport.created_at, limit=SWEEP_BATCH,
            of=ListeningReport,
        )
    return claims.hand_out(database=database, queue=queue, run=run, model=ListeningReport, claimed=claimed,
                           token=token, job_name=JOB_NAME)


# --- the job -----------------------------------------------------------------------------


def _scope(session, report: ListeningReport) -> TenantScope:
    return TenantScope.for_job(session, report.workspace_id, report.livemode, job=f"listening report {report.id}")


def build_report(*, database, report_id, token: str) -> str:
    """Builds a report leased with `token`: "ready", "failed", or "lost" when the
    lease is no longer the job's (or the report is gone)."""
    parsed = parse_id(report_id)
    try:
        with database.transaction() as session:
            report = session.get(ListeningReport, parsed)
            if report is None or report.claim_token != token or report.status != ReportStatus.PENDING:
                return "lost"
            figures = measure(_scope(session, report), report)
    except Exception as exc:  # noqa: BLE001 - recorded as the report's failure
        logger.error("listening report could not be read", exc_info=True, extra={"report_id": str(parsed)})
        return _finish(database, parsed, token, failure=_reason(exc))
    try:
        return _finish(database, parsed, token, figures=figures)
    except Exception as exc:  # noqa: BLE001 - nothing of it was kept: recorded as its failure
        logger.error("listening report could not be filled", exc_info=True, extra={"report_id": str(parsed)})
        return _finish(database, parsed, token, failure=_reason(exc))


def _reason(exc: Exception) -> str:
    """What went wrong, in one line: the database's own words for a statement it
    refused (not the statement and its values)."""
    cause = getattr(exc, "orig", None) or exc
    first_line = (str(cause).strip().splitlines() or [""])[0]
    text = f"{cause.__class__.__name__}: {first_line}" if first_line else cause.__class__.__name__
    return f"The report could not be built: {text}"[:1000]


def _finish(database, report_id, token: str, *, figures: dict | None = None, failure: str | None = None) -> str:
    with database.transaction() as session:
        report = session.execute(
            claims.lock_rows(session, select(ListeningReport).where(ListeningReport.id == report_id))
        ).scalar_one_or_none()
        if report is None or report.claim_token != token or report.status != ReportStatus.PENDING:
            return "lost"
        report.lease_until = report.claim_token = None
        report.completed_at = clock.now()
        if failure is not None:
            report.status, report.failure_reason = ReportStatus.FAILED, failure
            return "failed"
        for name, value in figures.items():
            setattr(report, name, value)
        report.share_of_voice = []
        REPORTS.announce("built", scope=_scope(session, report), record=report, monitor_id=report.monitor_id,
                         since=report.since, until=report.until)
        report.status = ReportStatus.READY
        return "ready"


def measure(scope: TenantScope, report: ListeningReport) -> dict:
    """The report's figures, from one pass over its monitor's signals of the window."""
    monitor = scope.session.get(ListeningMonitor, report.monitor_id)
    width = WIDTHS[report.granularity]
    first = _floor(report.since, report.granularity)
    buckets = []
    start = first
    while start < report.until:
        buckets.append({"start": start, "signals": 0, **{label.value: 0 for label in SentimentLabel}})
        start += width
    labels: Counter = Counter()
    authors: Counter = Counter()
    keywords = TermCounter(excluded_words(monitor.keywords, monitor.required_keywords) if monitor else frozenset())
    score_sum = 0.0
    rows = scope.session.execute(
        select(Signal.posted_at, Signal.sentiment_label, Signal.sentiment_score, Signal.author, Signal.content)
        .join(SignalMonitor, SignalMonitor.signal_id == Signal.id)
        .where(*scope.criteria(SignalMonitor), SignalMonitor.monitor_id == report.monitor_id,
               SignalMonitor.posted_at >= report.since, SignalMonitor.posted_at < report.until)
        .execution_options(yield_per=READ_BATCH)
    )
    for posted_at, label, score, author, content in rows:
        bucket = buckets[int((posted_at - first) // width)]
        bucket["signals"] += 1
        if label in bucket:
            bucket[label] += 1
        labels[label] += 1
        score_sum += score
        if author:
            authors[author] += 1
        keywords.add(content)
    signals = sum(labels.values())
    return dict(
        signals=signals,
        sentiment_split=dict(**{label.value: labels[label.value] for label in SentimentLabel},
                             average_score=round(score_sum / signals, 4) if signals else None),
        # Kept as the contract writes timestamps.
        volume=[{**bucket, "start": _STAMP._serialize(bucket["start"], "start", bucket)} for bucket in buckets],
        top_authors=[{"author": author, "signals": count}
                     for author, count in sorted(authors.items(), key=lambda item: (-item[1], item[0]))[:TOP_AUTHORS]],
        top_keywords=[{"keyword": keyword, "signals": count} for keyword, count in keywords.top(TOP_KEYWORDS)],
    )


def _floor(moment: dt.datetime, granularity: str) -> dt.datetime:
    moment = moment.astimezone(dt.timezone.utc)
    if granularity == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)
