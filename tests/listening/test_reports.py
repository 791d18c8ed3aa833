"""Reports through the API and their build job: asked for (202, pending), built by
the job (volume by hour or day, sentiment split, top authors and keywords, share of
voice empty until competitors fill it through the announcement), refused when the
window or the monitor is wrong, listed and read; a failed build, a lost lease, a
lost job found again by the sweep, and a build interrupted too often."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from persistence.listening import ListeningReport, ReportStatus
from socialpub.listening import building
from socialpub.listening.changes import REPORTS
from socialpub.listening.jobs import build_report
from tests.listening.factories import make_monitor, make_report, make_signal
from tests.support.factories import make_key, make_workspace

URL = "/api/v1/listening/reports"
GENERATE = f"{URL}/generate"
DAY = dt.timedelta(days=1)
START = dt.datetime(2026, 11, 10, tzinfo=dt.timezone.utc)


def generate(client, key, monitor_id, since=START, until=START + 4 * DAY, **extra):
    body = {"monitorId": str(monitor_id), "from": since.isoformat() if isinstance(since, dt.datetime) else since,
            "to": until.isoformat() if isinstance(until, dt.datetime) else until, **extra}
    return client.post(GENERATE, headers=key.headers, json=body)


def generated(client, key, monitor_id, **window) -> dict:
    response = generate(client, key, monitor_id, **window)
    assert response.status_code == 202, response.text
    data = response.json()["data"]
    assert response.headers["Location"] == f"{URL}/{data['id']}"
    return data


def fetch(client, key, report_id) -> dict:
    response = client.get(f"{URL}/{report_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def error_of(response, status: int, code: str = "validation_error") -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


@pytest.fixture
def monitor(session, workspace):
    return make_monitor(session, workspace, keywords=["acme"])


def seed(session, workspace, monitor_posted=()):
    for posted_at, content, author in monitor_posted:
        make_signal(session, workspace, content=content, author=author, posted_at=posted_at)


class TestGenerate:
    def test_is_accepted_pending_then_built_by_the_job(self, client, session, workspace, key, monitor, jobs):
        seed(session, workspace, [
            (START + dt.timedelta(hours=1), "I love Acme phones, great battery!", "@ana"),
            (START + dt.timedelta(hours=2), "Acme support is awful. I hate waiting.", "@ben"),
            (START + dt.timedelta(hours=30), "Acme phones arrive on Friday with new battery cases", "@ana"),
            (START - dt.timedelta(hours=1), "Acme before the window", "@ana"),
            (START + 4 * DAY, "Acme at the end, excluded", "@ana"),
            (START + dt.timedelta(hours=5), "Nothing about the brand", "@cy"),
        ])
        report = generated(client, key, monitor.id)
        assert report["status"] == "pending" and report["monitorId"] == str(monitor.id)
        assert report["from"] == "2026-11-10T00:00:00.000Z" and report["to"] == "2026-11-14T00:00:00.000Z"
        assert report["granularity"] == "day" and report["livemode"] is False
        for name in ("signals", "sentiment", "volume", "topAuthors", "topKeywords", "shareOfVoice", "completedAt",
                     "failureReason"):
            assert report[name] is None, name
        jobs.run()
        built = fetch(client, key, report["id"])
        assert built["status"] == "ready" and built["completedAt"] and built["failureReason"] is None
        assert built["signals"] == 3
        assert built["sentiment"]["positive"] == 1 and built["sentiment"]["negative"] == 1
        assert built["sentiment"]["neutral"] == 1 and -1 <= built["sentiment"]["averageScore"] <= 1
        assert [(point["start"], point["signals"]) for point in built["volume"]] == [
            ("2026-11-10T00:00:00.000Z", 2), ("2026-11-11T00:00:00.000Z", 1), ("2026-11-12T00:00:00.000Z", 0),
            ("2026-11-13T00:00:00.000Z", 0),
        ]
        assert built["volume"][0]["positive"] == 1 and built["volume"][0]["negative"] == 1
        assert built["topAuthors"] == [{"author": "@ana", "signals": 2}, {"author": "@ben", "signals": 1}]
        keywords = {entry["keyword"]: entry["signals"] for entry in built["topKeywords"]}
        assert keywords["phones"] == 2 and keywords["battery"] == 2
        assert "acme" not in keywords and "the" not in keywords and "i" not in keywords
        assert built["topKeywords"][0]["signals"] == 2
        assert built["shareOfVoice"] == []

    def test_a_short_window_is_counted_by_hour(self, client, session, workspace, key, monitor, jobs):
        seed(session, workspace, [(START + dt.timedelta(minutes=90), "Acme!", None)])
        report = generated(client, key, monitor.id, since="2026-11-10T00:30:00+00:00", until="2026-11-10T03:00:00Z")
        assert report["granularity"] == "hour"
        jobs.run()
        built = fetch(client, key, report["id"])
        assert [(point["start"], point["signals"]) for point in built["volume"]] == [
            ("2026-11-10T00:00:00.000Z", 0), ("2026-11-10T01:00:00.000Z", 1), ("2026-11-10T02:00:00.000Z", 0),
        ]
        assert built["topAuthors"] == []

    def test_an_empty_window_is_ready_with_zeros(self, client, key, monitor, jobs):
        report = generated(client, key, monitor.id)
        jobs.run()
        built = fetch(client, key, report["id"])
        assert built["status"] == "ready" and built["signals"] == 0
        assert built["sentiment"] == {"positive": 0, "negative": 0, "neutral": 0, "averageScore": None}
        assert [point["signals"] for point in built["volume"]] == [0, 0, 0, 0]

    def test_the_announcement_carries_the_window_and_lets_competitors_fill_share_of_voice(
        self, client, session, workspace, key, monitor, jobs,
    ):
        seen = []

        def competitors(change):
            seen.append((change.kind, change.record.id, change.details))
            change.record.share_of_voice = [
                {"competitor_id": None, "name": "Globex", "signals": 1, "share": 0.25},
            ]

        report = generated(client, key, monitor.id)
        with REPORTS.subscribed(competitors, "built"):
            jobs.run()
        [(kind, record_id, details)] = seen
        assert kind == "built" and str(record_id) == report["id"]
        assert details["monitor_id"] == monitor.id
        assert details["since"] == START and details["until"] == START + 4 * DAY
        assert fetch(client, key, report["id"])["shareOfVoice"] == [
            {"competitorId": None, "name": "Globex", "signals": 1, "share": 0.25},
        ]

    def test_a_subscriber_that_raises_fails_the_report_with_the_reason(self, client, key, monitor, jobs):
        def refuse(change):
            raise RuntimeError("competitors are not ready")

        report = generated(client, key, monitor.id)
        with REPORTS.subscribed(refuse, "built"):
            jobs.run()
        failed = fetch(client, key, report["id"])
        assert failed["status"] == "failed" and failed["completedAt"]
        assert failed["failureReason"] == "The report could not be built: RuntimeError: competitors are not ready"
        assert failed["signals"] is None and failed["shareOfVoice"] is None

    @pytest.mark.parametrize("window, field, words", [
        ({"since": START, "until": START}, "from", "before"),
        ({"since": START + DAY, "until": START}, "from", "before"),
        ({"since": START, "until": START + 367 * DAY}, "to", "366 days"),
    ])
    def test_a_wrong_window_is_422(self, client, session, key, monitor, window, field, words):
        error = error_of(generate(client, key, monitor.id, **window), 422)
        assert error["details"][0]["field"] == field and words in error["message"]
        assert session.execute(select(func.count()).select_from(ListeningReport)).scalar_one() == 0

    def test_the_longest_window_is_366_days(self, client, key, monitor):
        assert generate(client, key, monitor.id, since=START, until=START + 366 * DAY).status_code == 202

    def test_a_timestamp_without_an_offset_is_422(self, client, key, monitor):
        error = error_of(generate(client, key, monitor.id, since="2026-11-10T00:00:00"), 422)
        assert error["details"][0]["field"] == "from"

    def test_a_monitor_of_another_workspace_or_mode_is_422(self, client, session, workspace, key):
        for other in (make_monitor(session, make_workspace(session, name="Other")),
                      make_monitor(session, workspace, livemode=True)):
            error = error_of(generate(client, key, other.id), 422)
            assert error["details"][0]["field"] == "monitorId" and str(other.id) in error["message"]
        error_of(generate(client, key, uuid.uuid4()), 422)
        assert session.execute(select(func.count()).select_from(ListeningReport)).scalar_one() == 0

    def test_unknown_fields_and_a_missing_window_are_422(self, client, key, monitor):
        error_of(generate(client, key, monitor.id, extra=True), 422)
        response = client.post(GENERATE, headers=key.headers, json={"monitorId": str(monitor.id)})
        error_of(response, 422)

    def test_needs_listening_write(self, client, session, workspace, monitor):
        reader = make_key(session, workspace, scopes=["listening:read"])
        error_of(generate(client, reader, monitor.id), 403, "insufficient_scope")

    def test_a_queue_that_refuses_the_build_leaves_it_for_the_sweep(self, client, session, workspace, key, monitor,
                                                                  jobs, app, settings, db):
        runtime = app.app.extensions["socialpub"]
        original = runtime.queue.enqueue

        def refuse(*args, **kwargs):
            raise ConnectionError("queue down")

        runtime.queue.enqueue = refuse
        try:
            report = generated(client, key, monitor.id)
        finally:
            runtime.queue.enqueue = original
        session.expire_all()
        stored = session.get(ListeningReport, uuid.UUID(report["id"]))
        assert stored.status == ReportStatus.PENDING and stored.claim_token is None
        assert building.dispatch_pending(database=db, queue=runtime.queue, settings=settings, run=build_report) == 1
        jobs.run()
        assert fetch(client, key, report["id"])["status"] == "ready"


class TestTheJob:
    def test_a_lost_job_is_queued_again_by_the_sweep_after_its_lease(self, client, session, key, monitor, jobs, app,
                                                                     settings, db, fake_clock):
        report = generated(client, key, monitor.id)
        jobs.lose_all()
        runtime = app.app.extensions["socialpub"]
        sweep = dict(database=db, queue=runtime.queue, settings=settings, run=build_report)
        assert building.dispatch_pending(**sweep) == 0  # its lease still runs
        fake_clock.advance(settings.listening_report_lease_seconds + 1)
        assert building.dispatch_pending(**sweep) == 1
        jobs.run()
        built = fetch(client, key, report["id"])
        assert built["status"] == "ready"
        session.expire_all()
        assert session.get(ListeningReport, uuid.UUID(report["id"])).attempts == 2

    def test_a_build_interrupted_three_times_fails(self, client, session, key, monitor, jobs, app, settings, db,
                                                   fake_clock):
        report = generated(client, key, monitor.id)
        runtime = app.app.extensions["socialpub"]
        sweep = dict(database=db, queue=runtime.queue, settings=settings, run=build_report)
        for _ in range(building.MAX_ATTEMPTS - 1):
            jobs.lose_all()
            fake_clock.advance(settings.listening_report_lease_seconds + 1)
            assert building.dispatch_pending(**sweep) == 1
        jobs.lose_all()
        fake_clock.advance(settings.listening_report_lease_seconds + 1)
        assert building.dispatch_pending(**sweep) == 0
        failed = fetch(client, key, report["id"])
        assert failed["status"] == "failed" and "interrupted 3 times" in failed["failureReason"]

    def test_a_job_whose_lease_was_taken_leaves_the_report_alone(self, session, workspace, db):
        report = make_report(session, workspace, claim_token="someone-else")
        assert building.build_report(database=db, report_id=report.id, token="mine") == "lost"
        session.expire_all()
        assert session.get(ListeningReport, report.id).status == ReportStatus.PENDING

    def test_a_ready_report_is_not_built_again(self, session, workspace, db):
        report = make_report(session, workspace, status=ReportStatus.READY, claim_token="token")
        assert building.build_report(database=db, report_id=report.id, token="token") == "lost"


class TestListAndGet:
    def test_lists_newest_first_filtered_by_monitor_and_status(self, client, session, workspace, key, monitor,
                                                               fake_clock):
        other = make_monitor(session, workspace, name="Other", keywords=["globex"])
        first = make_report(session, workspace, monitor=monitor)
        fake_clock.advance(1)
        second = make_report(session, workspace, monitor=other, status=ReportStatus.READY)
        fake_clock.advance(1)
        third = make_report(session, workspace, monitor=monitor, status=ReportStatus.FAILED)
        make_report(session, workspace, livemode=True)
        make_report(session, make_workspace(session, name="Elsewhere"))

        def listed(**params):
            response = client.get(URL, headers=key.headers, params=params)
            assert response.status_code == 200, response.text
            return [item["id"] for item in response.json()["data"]], response.json()["pagination"]["totalItems"]

        assert listed() == ([str(third.id), str(second.id), str(first.id)], 3)
        assert listed(monitorId=str(monitor.id)) == ([str(third.id), str(first.id)], 2)
        assert listed(status="ready") == ([str(second.id)], 1)
        assert listed(monitorId=str(monitor.id), status="pending") == ([str(first.id)], 1)
        assert listed(monitorId=str(uuid.uuid4())) == ([], 0)
        assert listed(limit=1, offset=1) == ([str(second.id)], 3)
        error_of(client.get(URL, headers=key.headers, params={"status": "done"}), 422)

    def test_another_workspace_or_mode_report_is_404(self, client, session, workspace, key):
        for report in (make_report(session, make_workspace(session, name="Other")),
                       make_report(session, workspace, livemode=True)):
            error_of(client.get(f"{URL}/{report.id}", headers=key.headers), 404, "resource_not_found")

    def test_get_on_generate_is_not_a_report(self, client, key):
        response = client.get(GENERATE, headers=key.headers)
        assert response.status_code in (404, 405), response.text
        assert response.json()["success"] is False
