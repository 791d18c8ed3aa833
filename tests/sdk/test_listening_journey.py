"""Social listening through the generated client: a monitor saved (one refused for a
keyword that could never match), signals ingested one at a time (a duplicate
answered with the stored signal) and in bulk (item by item), listed by monitor and
sentiment, and a paused monitor matching nothing until it resumes; a report asked
for (202), built in the background and read back, listed by monitor and status, a
wrong window refused; and the dashboard's stats."""
from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
from socialpub_client import AuthenticatedClient
from socialpub_client.api.listening import (
    create_listening_monitor,
    generate_listening_report,
    get_listening_report,
    get_listening_stats,
    ingest_signal,
    ingest_signals_bulk,
    list_listening_monitors,
    list_listening_reports,
    list_signals,
    toggle_listening_monitor,
)
from socialpub_client.models.language_code_input import LanguageCodeInput
from socialpub_client.models.listening_report import ListeningReport
from socialpub_client.models.listening_report_create import ListeningReportCreate
from socialpub_client.models.listening_report_list import ListeningReportList
from socialpub_client.models.listening_report_response import ListeningReportResponse
from socialpub_client.models.listening_report_status_input import ListeningReportStatusInput
from socialpub_client.models.listening_stats_response import ListeningStatsResponse
from socialpub_client.models.listening_monitor_create import ListeningMonitorCreate
from socialpub_client.models.listening_monitor_list import ListeningMonitorList
from socialpub_client.models.listening_monitor_response import ListeningMonitorResponse
from socialpub_client.models.period_input import PeriodInput
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.signal_bulk_ingest import SignalBulkIngest
from socialpub_client.models.signal_bulk_item import SignalBulkItem
from socialpub_client.models.signal_create import SignalCreate
from socialpub_client.models.signal_ingest_result_response import SignalIngestResultResponse
from socialpub_client.models.signal_list import SignalList
from socialpub_client.models.signal_response import SignalResponse
from socialpub_client.models.signal_sentiment_label_input import SignalSentimentLabelInput
from socialpub_client.types import Unset

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow

POSTED = dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.timezone.utc)


def test_listening_from_monitors_to_signals(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    run = uuid.uuid4().hex[:8]
    brand = f"Journeybrand{run}"
    monitor = expect(
        create_listening_monitor.sync_detailed(client=client, body=ListeningMonitorCreate(
            name="Journey brand", keywords=[brand, f"{brand} phone"], excluded_keywords=["giveaway"],
            platforms=[PlatformInput.MASTODON, PlatformInput.BLUESKY], languages=[LanguageCodeInput.EN],
        )),
        201, ListeningMonitorResponse,
    ).data
    assert monitor.enabled is True and monitor.keywords == [brand, f"{brand} phone"] and monitor.last_polled_at is None
    never = ListeningMonitorCreate(name="Journey never", keywords=["!!!"])
    refused = expect_error(create_listening_monitor.sync_detailed(client=client, body=never), 422, "validation_error")
    assert refused.error.message and not isinstance(refused.error.details, Unset)
    assert refused.error.details[0].field == "keywords[0]"
    enabled = expect(list_listening_monitors.sync_detailed(client=client, enabled=True, limit=100), 200,
                     ListeningMonitorList)
    assert monitor.id in {m.id for m in enabled.data}

    first = SignalCreate(
        platform=PlatformInput.MASTODON, external_id=f"journey-{run}-1", content=f"I love my new {brand} phone!",
        posted_at=POSTED, author="@ana@social.example", url="https://social.example/@ana/1",
        language=LanguageCodeInput.EN, reach=1200,
    )
    created = ingest_signal.sync_detailed(client=client, body=first)
    signal = expect(created, 201, SignalResponse).data
    assert signal.monitor_ids == [monitor.id] and signal.sentiment.label == "positive"
    assert signal.external_id == first.external_id and signal.reach == 1200
    again = ingest_signal.sync_detailed(client=client, body=first)
    assert expect(again, 200, SignalResponse).data.id == signal.id
    assert again.headers["signal-duplicate"] == "true"

    bulk = expect(
        ingest_signals_bulk.sync_detailed(client=client, body=SignalBulkIngest(signals=[
            SignalBulkItem(platform="bluesky", external_id=f"journey-{run}-2", language="en",
                           content=f"{brand} support is awful. I hate it.", posted_at="2026-11-21T09:30:00Z"),
            SignalBulkItem(platform="mastodon", external_id=f"journey-{run}-1", content="again",
                           posted_at="2026-11-21T09:30:00Z"),
            SignalBulkItem(platform="mastodon", external_id=f"journey-{run}-3", content="   ",
                           posted_at="2026-11-21T09:30:00Z"),
        ])),
        200, SignalIngestResultResponse,
    ).data
    assert (bulk.created, bulk.duplicates, bulk.invalid) == (1, 1, 1)
    assert [item.status for item in bulk.results] == ["created", "duplicate", "invalid"]
    assert bulk.results[1].id == signal.id
    invalid = bulk.results[2].error
    assert not isinstance(invalid, Unset) and not isinstance(invalid.details, Unset)
    assert invalid.details[0].field == "signals[2].content"

    matched = expect(list_signals.sync_detailed(client=client, monitor_id=monitor.id), 200, SignalList)
    assert [s.external_id for s in matched.data] == [f"journey-{run}-2", f"journey-{run}-1"]
    assert matched.pagination.total_items == 2
    negative = expect(
        list_signals.sync_detailed(client=client, monitor_id=monitor.id, sentiment=SignalSentimentLabelInput.NEGATIVE,
                                   platform=PlatformInput.BLUESKY, from_=POSTED, to=POSTED + dt.timedelta(days=7)),
        200, SignalList,
    )
    assert [s.external_id for s in negative.data] == [f"journey-{run}-2"]
    expect_error(list_signals.sync_detailed(client=client, from_=POSTED, to=POSTED), 422, "validation_error")

    paused = expect(toggle_listening_monitor.sync_detailed(monitor.id, client=client), 200, ListeningMonitorResponse)
    assert paused.data.enabled is False
    unmatched = SignalCreate(platform=PlatformInput.MASTODON, external_id=f"journey-{run}-4", content=brand,
                             posted_at=POSTED, language=LanguageCodeInput.EN)
    ingested = expect(ingest_signal.sync_detailed(client=client, body=unmatched), 201, SignalResponse).data
    assert ingested.monitor_ids == []
    resumed = expect(toggle_listening_monitor.sync_detailed(monitor.id, client=client), 200, ListeningMonitorResponse)
    assert resumed.data.enabled is True
    expect_error(toggle_listening_monitor.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")

    reader = sdk_server.client(sdk_server.keys.read_only)
    expect_error(list_signals.sync_detailed(client=reader), 403, "insufficient_scope")

    # A report on the monitor: asked for, built in the background, read back.
    window = ListeningReportCreate(monitor_id=monitor.id, from_=POSTED - dt.timedelta(days=1),
                                   to=POSTED + dt.timedelta(days=3))
    asked = generate_listening_report.sync_detailed(client=client, body=window)
    pending = expect(asked, 202, ListeningReportResponse).data
    assert asked.headers["location"].endswith(f"/listening/reports/{pending.id}")
    assert pending.status == "pending" and pending.monitor_id == monitor.id and pending.granularity == "day"
    report = _built(client, pending.id)
    assert report.status == "ready" and report.signals == 2
    # Share of voice: empty while the workspace tracks no competitor (the competitors'
    # journey may have added some); else the workspace first, then each competitor.
    voices = report.share_of_voice or []
    if voices:
        assert voices[0].competitor_id is None and sum(voice.signals for voice in voices) == 2
        assert all(voice.competitor_id is not None for voice in voices[1:])
    assert report.sentiment is not None and (report.sentiment.positive, report.sentiment.negative) == (1, 1)
    assert report.volume is not None and [point.signals for point in report.volume] == [0, 1, 1, 0, 0]
    assert report.top_authors is not None and [a.author for a in report.top_authors] == ["@ana@social.example"]
    assert report.top_keywords is not None
    assert all(keyword.keyword != brand.lower() for keyword in report.top_keywords)
    mine = expect(list_listening_reports.sync_detailed(client=client, monitor_id=monitor.id,
                                                       status=ListeningReportStatusInput.READY), 200, ListeningReportList)
    assert [r.id for r in mine.data] == [report.id] and mine.pagination.total_items == 1
    backwards = ListeningReportCreate(monitor_id=monitor.id, from_=POSTED, to=POSTED - dt.timedelta(hours=1))
    refused_window = expect_error(generate_listening_report.sync_detailed(client=client, body=backwards), 422,
                                  "validation_error")
    assert not isinstance(refused_window.error.details, Unset) and refused_window.error.details[0].field == "from"
    unknown = ListeningReportCreate(monitor_id=uuid.uuid4(), from_=POSTED, to=POSTED + dt.timedelta(days=1))
    expect_error(generate_listening_report.sync_detailed(client=client, body=unknown), 422, "validation_error")
    expect_error(get_listening_report.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")

    stats = expect(get_listening_stats.sync_detailed(client=client, period=PeriodInput.LAST_7_DAYS), 200,
                   ListeningStatsResponse).data
    assert stats.period == "7d" and stats.to > stats.from_
    ours = [entry for entry in stats.monitors if entry.monitor_id == monitor.id]
    assert len(ours) == 1 and ours[0].name == "Journey brand" and ours[0].enabled is True
    assert stats.totals.signals >= ours[0].totals.signals >= 0
    expect_error(get_listening_stats.sync_detailed(client=reader), 403, "insufficient_scope")


def _built(client: AuthenticatedClient, report_id: uuid.UUID) -> ListeningReport:
    """The report once its build job (the server's queue) has finished it."""
    deadline = time.monotonic() + 30
    while True:
        report = expect(get_listening_report.sync_detailed(report_id, client=client), 200, ListeningReportResponse).data
        if report.status != "pending" or time.monotonic() > deadline:
            return report
        time.sleep(0.05)
