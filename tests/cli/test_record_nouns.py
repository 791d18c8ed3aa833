"""The nouns of a workspace's records, one pattern (socialpub.cli.records), each driven
through the real command line against the run's backend: `list --workspace` (a table,
or one JSON document with --json; one mode with --mode; --limit), `show ID` as the API
shows the record, and the noun's actions through the API's services as the operator,
whom the activity feed names. Bad input is one line and status 2, changing nothing."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import select

from persistence.calendar import CalendarActivity, CalendarReservation
from persistence.posts import Post
from persistence.uploads import Upload
from socialpub.cli.common import OPERATOR
from tests.ai.factories import make_conversation
from tests.analytics.conftest import tracked
from tests.autoreply.factories import make_account, make_rule
from tests.calendar.contract import make_reservation
from tests.crisis.factories import make_incident, make_monitor, make_signal
from tests.rss.contract import make_feed
from tests.support.cli import assert_refused, records_of, run, run_json
from tests.support.factories import make_bulk_operation, make_post, make_workspace
from tests.templates.factories import make_template
from tests.uploads.factories import make_upload

NONE = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def workspace(backend_cli_database):
    with records_of(backend_cli_database) as session:
        return make_workspace(session)


def made(database_url, factory, workspace, **fields) -> str:
    with records_of(database_url) as session:
        return str(factory(session, workspace, **fields).id)


def listed(capsys, noun, workspace, *extra) -> list[dict]:
    document = run_json(capsys, noun, "list", "--workspace", str(workspace.id), *extra)
    assert len(document) == 1
    return next(iter(document.values()))


def activity(url, subject_id) -> list[tuple[str, str]]:
    with records_of(url) as session:
        rows = session.execute(select(CalendarActivity).where(CalendarActivity.subject_id == uuid.UUID(subject_id))
                               .order_by(CalendarActivity.created_at)).scalars()
        return [(row.type, row.actor) for row in rows]


def assert_pattern_refusals(capsys, url, noun, workspace):
    """What every noun refuses alike, with one line and status 2."""
    assert_refused(capsys, url, noun, "list", "--workspace", str(workspace.id), "--limit", "0", says="--limit")
    assert_refused(capsys, url, noun, "list", "--workspace", "nope", says="not an id")
    assert_refused(capsys, url, noun, "list", "--workspace", NONE, says="workspace")
    assert_refused(capsys, url, noun, "list", "--workspace", str(workspace.id), "--mode", "staging")
    assert_refused(capsys, url, noun, "show", NONE)
    assert_refused(capsys, url, noun, "show", "nope", says="not an id")


def test_post(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    draft = made(url, make_post, workspace, content="A draft for the operator")
    scheduled = made(url, make_post, workspace, status="scheduled", content="Soon")
    made(url, make_post, workspace, livemode=True, content="Live one")
    assert {row["id"] for row in listed(capsys, "post", workspace, "--mode", "test")} == {draft, scheduled}
    assert len(listed(capsys, "post", workspace)) == 3
    assert [row["id"] for row in listed(capsys, "post", workspace, "--status", "scheduled")] == [scheduled]
    assert len(listed(capsys, "post", workspace, "--limit", "1")) == 1
    table = run(capsys, "post", "list", "--workspace", str(workspace.id)).out.splitlines()
    assert table[0].split() == ["id", "livemode", "status", "scheduledAt", "platforms", "content"] and len(table) == 4
    shown = run_json(capsys, "post", "show", draft)
    assert shown["content"] == "A draft for the operator" and shown["status"] == "draft" and shown["targets"] == []
    assert "A draft for the operator" in run(capsys, "post", "show", draft).out

    publishing = run_json(capsys, "post", "publish", scheduled)
    assert publishing["id"] == scheduled and publishing["status"] == "scheduled"
    published = made(url, make_post, workspace, status="published", content="Out already")
    assert_refused(capsys, url, "post", "publish", published, says="published")
    assert run_json(capsys, "post", "delete", draft) == {"id": draft, "deleted": True}
    assert ("post.deleted", OPERATOR.name) in activity(url, draft)
    assert ("post.rescheduled", OPERATOR.name) in activity(url, scheduled)
    assert_refused(capsys, url, "post", "delete", draft)
    assert_pattern_refusals(capsys, url, "post", workspace)


def test_bulk(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    operation = made(url, make_bulk_operation, workspace)
    [row] = listed(capsys, "bulk", workspace)
    assert row["id"] == operation and row["status"] == "pending"
    assert run_json(capsys, "bulk", "show", operation)["action"] == "archive"
    assert run_json(capsys, "bulk", "cancel", operation)["status"] == "cancelled"
    assert_pattern_refusals(capsys, url, "bulk", workspace)


def test_feed(backend_cli_database, workspace, capsys, monkeypatch):
    url = backend_cli_database
    monkeypatch.setenv("SOCIALPUB_QUEUE_BACKEND", "inline")
    feed = made(url, make_feed, workspace, url="http://127.0.0.1:9/feed.xml")
    assert [row["id"] for row in listed(capsys, "feed", workspace)] == [feed]
    assert run_json(capsys, "feed", "show", feed)["status"] == "active"
    assert run_json(capsys, "feed", "pause", feed)["status"] == "paused"
    assert_refused(capsys, url, "feed", "fetch", feed, says="paused")
    assert "Resumed feed" in run(capsys, "feed", "resume", feed).out
    fetched = run_json(capsys, "feed", "fetch", feed)
    assert fetched["id"] == feed
    # The fetch ran before the command ended: a loopback address is refused by the guard.
    assert run_json(capsys, "feed", "show", feed)["lastError"]
    assert_pattern_refusals(capsys, url, "feed", workspace)


def test_template(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    template = made(url, make_template, workspace, name="Weekly special")
    made(url, make_template, workspace, livemode=True, name="Live special")
    assert [row["name"] for row in listed(capsys, "template", workspace, "--mode", "test")] == ["Weekly special"]
    assert run_json(capsys, "template", "show", template)["content"] == "Come by this week!"
    assert_pattern_refusals(capsys, url, "template", workspace)


def test_autoreply(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    rule = made(url, make_rule, workspace)
    assert [row["id"] for row in listed(capsys, "autoreply", workspace)] == [rule]
    assert run_json(capsys, "autoreply", "disable", rule)["enabled"] is False
    assert run_json(capsys, "autoreply", "show", rule)["enabled"] is False
    assert "Enabled auto-reply rule" in run(capsys, "autoreply", "enable", rule).out
    assert run_json(capsys, "autoreply", "show", rule)["enabled"] is True
    assert_pattern_refusals(capsys, url, "autoreply", workspace)


def test_calendar(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    held = made(url, make_reservation, workspace, livemode=False)
    assert [row["id"] for row in listed(capsys, "calendar", workspace, "--status", "held")] == [held]
    assert run_json(capsys, "calendar", "show", held)["status"] == "held"
    assert run_json(capsys, "calendar", "release", held) == {"id": held, "deleted": True}
    assert ("reservation.released", OPERATOR.name) in activity(url, held)
    with records_of(url) as session:
        assert session.get(CalendarReservation, uuid.UUID(held)) is None
    assert_refused(capsys, url, "calendar", "release", held)
    assert_pattern_refusals(capsys, url, "calendar", workspace)


def test_conversation(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    conversation = made(url, make_conversation, workspace)
    assert [row["title"] for row in listed(capsys, "conversation", workspace)] == ["Ideas for spring"]
    shown = run_json(capsys, "conversation", "show", conversation)
    assert [message["role"] for message in shown["messages"]] == ["user", "assistant"]
    assert_pattern_refusals(capsys, url, "conversation", workspace)


def test_analytics(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    with records_of(url) as session:
        account = make_account(session, workspace)
        row = tracked(session, account, at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2), likes=7)
        post_id = str(row.post_id)
    [metrics] = listed(capsys, "analytics", workspace)
    assert metrics["postId"] == post_id and metrics["likes"] == 7
    shown = run_json(capsys, "analytics", "show", post_id)
    assert shown["postId"] == post_id and [target["likes"] for target in shown["targets"]] == [7]
    overview = run_json(capsys, "analytics", "overview", "--workspace", str(workspace.id), "--period", "7d")
    assert overview["period"] == "7d"
    assert "period" in run(capsys, "analytics", "overview", "--workspace", str(workspace.id)).out
    assert_refused(capsys, url, "analytics", "overview", "--workspace", str(workspace.id), "--period", "1y")
    assert_pattern_refusals(capsys, url, "analytics", workspace)


def test_monitor(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    monitor = made(url, make_monitor, workspace, name="Brand")
    assert [row["name"] for row in listed(capsys, "monitor", workspace)] == ["Brand"]
    assert run_json(capsys, "monitor", "show", monitor)["keywords"] == ["acme"]
    assert_pattern_refusals(capsys, url, "monitor", workspace)


def test_signal(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    signal = made(url, make_signal, workspace)
    [row] = listed(capsys, "signal", workspace)
    assert row["id"] == signal
    shown = run_json(capsys, "signal", "show", signal)
    assert shown["monitorIds"] == [] and shown["platform"] == "bluesky"
    assert_pattern_refusals(capsys, url, "signal", workspace)


def test_incident(backend_cli_database, workspace, capsys):
    url = backend_cli_database
    incident = made(url, make_incident, workspace)
    assert [row["id"] for row in listed(capsys, "incident", workspace, "--status", "investigating")] == [incident]
    moved = run_json(capsys, "incident", "update", incident, "--status", "identified", "--note", "Courier outage")
    assert moved["status"] == "identified"
    assert moved["timeline"][-1]["note"] == "Courier outage" and moved["timeline"][-1]["by"] == OPERATOR.name
    assert_refused(capsys, url, "incident", "update", incident, "--status", "investigating")  # forward only
    assert_refused(capsys, url, "incident", "update", incident, "--status", "closed")
    assert run_json(capsys, "incident", "show", incident)["status"] == "identified"
    assert_pattern_refusals(capsys, url, "incident", workspace)


def test_upload(backend_cli_database, workspace, capsys, tmp_path, monkeypatch):
    url = backend_cli_database
    monkeypatch.setenv("SOCIALPUB_UPLOADS_DIR", str(tmp_path / "uploads"))
    upload = made(url, make_upload, workspace, status="pending", filename="menu.png")
    [row] = listed(capsys, "upload", workspace)
    assert row["id"] == upload and row["filename"] == "menu.png" and row["status"] == "pending"
    assert run_json(capsys, "upload", "show", upload)["contentType"] == "image/png"
    assert run_json(capsys, "upload", "delete", upload) == {"id": upload, "deleted": True}
    with records_of(url) as session:
        assert session.get(Upload, uuid.UUID(upload)) is None
    assert_pattern_refusals(capsys, url, "upload", workspace)


def test_another_workspace_record_is_found_by_its_own(backend_cli_database, workspace, capsys):
    # The operator names a record by id alone; its workspace and mode are its own.
    url = backend_cli_database
    with records_of(url) as session:
        other = make_workspace(session, name="Other")
    post = made(url, make_post, other, livemode=True)
    assert run_json(capsys, "post", "show", post)["livemode"] is True
    assert listed(capsys, "post", workspace) == []
    with records_of(url) as session:
        assert session.execute(select(Post.id)).scalars().all() == [uuid.UUID(post)]
