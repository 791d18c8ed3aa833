"""Handlers of the `listening` tag."""
from socialpub import envelope
from socialpub.listening import monitors, reports, signals, stats
from socialpub.listening.schemas import (
    IngestResultSchema,
    MonitorSchema,
    ReportCreateSchema,
    ReportSchema,
    SignalInputSchema,
    SignalSchema,
    StatsSchema,
    load_items,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_queue, current_runtime, current_session, load

monitor_schema = MonitorSchema()
signal_schema = SignalSchema()
signal_input_schema = SignalInputSchema()
ingest_result_schema = IngestResultSchema()
report_schema = ReportSchema()
report_create_schema = ReportCreateSchema()
stats_schema = StatsSchema()

# On the 200 of an ingest that found the signal already stored.
DUPLICATE_HEADER = "Signal-Duplicate"


def list_listening_monitors(enabled=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = monitors.list_monitors(
        session=current_session(), principal=current_principal(), enabled=enabled, limit=limit, offset=offset
    )
    return envelope.page(result, lambda found: monitor_schema.dump(found, many=True))


def create_listening_monitor(body):
    fields = load(monitor_schema, body)
    monitor = monitors.create_monitor(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(monitor_schema.dump(monitor), location=f"{API_PREFIX}/listening/monitors")


def toggle_listening_monitor(monitor_id):
    monitor = monitors.toggle_monitor(session=current_session(), principal=current_principal(), monitor_id=monitor_id)
    return envelope.ok(monitor_schema.dump(monitor))


def list_signals(monitor_id=None, sentiment=None, platform=None, from_=None, to=None,
                 limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = signals.list_signals(
        session=current_session(), principal=current_principal(), monitor_id=monitor_id, sentiment_label=sentiment,
        platform=platform, since=from_, until=to, limit=limit, offset=offset,
    )
    return envelope.page(result, lambda found: signal_schema.dump(found, many=True))


def ingest_signal(body):
    fields = load(signal_input_schema, body)
    signal, created = signals.ingest_signal(session=current_session(), principal=current_principal(), **fields)
    if created:
        return envelope.created(signal_schema.dump(signal), location=f"{API_PREFIX}/listening/signals")
    return envelope.ok(signal_schema.dump(signal), headers={DUPLICATE_HEADER: "true"})


def ingest_signals_bulk(body):
    result = signals.ingest_signals(
        session=current_session(), principal=current_principal(), items=load_items(body["signals"])
    )
    return envelope.ok(ingest_result_schema.dump(result))


def list_listening_reports(monitor_id=None, status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = reports.list_reports(
        session=current_session(), principal=current_principal(), monitor_id=monitor_id, status=status, limit=limit,
        offset=offset,
    )
    return envelope.page(result, lambda found: report_schema.dump(found, many=True))


def generate_listening_report(body):
    fields = load(report_create_schema, body)
    report = reports.generate_report(
        session=current_session(), principal=current_principal(), database=current_runtime().database,
        queue=current_queue(), settings=current_runtime().settings, **fields,
    )
    return envelope.accepted(report_schema.dump(report), location=f"{API_PREFIX}/listening/reports/{report.id}")


def get_listening_report(report_id):
    report = reports.get_report(session=current_session(), principal=current_principal(), report_id=report_id)
    return envelope.ok(report_schema.dump(report))


def get_listening_stats(period=None):
    result = stats.get_stats(session=current_session(), principal=current_principal(), period=period)
    return envelope.ok(stats_schema.dump(result))
