"""The actions of the workspace's area pages, each through its form as a person sends
it (with the page's CSRF token): it changes the record through the API's service,
says so on the page it goes back to (in the same mode), and is a security event
naming the member; the member is the actor the records keep (the calendar's activity,
an incident's timeline). Without the token, or with a wrong one, nothing changes; a
record of another workspace, or of the other mode than the form's, is not found."""
from __future__ import annotations

import datetime as dt
import re
import logging
from dataclasses import dataclass
from typing import Callable

import pytest
from sqlalchemy import select

from persistence.autoreply import AutoReplyRule
from persistence.bulk import BulkOperation
from persistence.calendar import CalendarActivity, CalendarReservation
from persistence.crisis import CrisisIncident
from persistence.linkinbio import LinkPage
from persistence.posts import Post
from persistence.rss import RssFeed
from persistence.uploads import Upload
from tests.autoreply.factories import make_account, make_rule
from tests.calendar.contract import make_reservation
from tests.crisis.factories import make_incident
from tests.linkinbio.factories import make_page
from tests.rss.contract import make_feed
from tests.support.factories import make_bulk_operation, make_post
from tests.uploads.factories import make_upload


@dataclass(frozen=True)
class Case:
    name: str
    page: str  # the area's page, where the form is
    path: str  # the action's address, with {id}
    make: Callable  # (session, workspace, livemode) -> the record
    model: type
    state: Callable  # the record's state, as the test reads it (None once gone)
    before: object
    after: object
    says: str
    event: str
    data: dict | None = None


def _status(record):
    return None if record is None else record.status


def _exists(record):
    return record is not None


def _enabled(record):
    return record.enabled


def _soon():
    return dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0) + dt.timedelta(days=2)


CASES = [
    Case("post-publish", "posts", "/dashboard/posts/{id}/publish",
         lambda s, w, live: make_post(s, w, livemode=live, content="Ready to go"), Post, _status, "draft",
         "scheduled", "Publishing the post now", "post.published"),
    Case("post-delete", "posts", "/dashboard/posts/{id}/delete",
         lambda s, w, live: make_post(s, w, livemode=live, content="Going away"), Post, _exists, True, False,
         "Deleted the post", "post.deleted"),
    Case("bulk-cancel", "posts", "/dashboard/posts/bulk/{id}/cancel",
         lambda s, w, live: make_bulk_operation(s, w, livemode=live), BulkOperation, _status, "pending", "cancelled",
         "Cancelled the bulk archive", "bulk.cancelled"),
    Case("feed-pause", "feeds", "/dashboard/feeds/{id}/pause",
         lambda s, w, live: make_feed(s, w, livemode=live), RssFeed, _status, "active", "paused",
         "Paused the feed Example feed", "feed.paused"),
    Case("feed-resume", "feeds", "/dashboard/feeds/{id}/resume",
         lambda s, w, live: make_feed(s, w, livemode=live, status="paused"), RssFeed, _status, "paused", "active",
         "Resumed the feed Example feed", "feed.resumed"),
    Case("autoreply-disable", "auto-reply", "/dashboard/auto-reply/{id}/disable",
         lambda s, w, live: make_rule(s, w, livemode=live, name="Prices"), AutoReplyRule, _enabled, True, False,
         "Disabled the rule Prices", "autoreply.disabled"),
    Case("autoreply-enable", "auto-reply", "/dashboard/auto-reply/{id}/enable",
         lambda s, w, live: make_rule(s, w, livemode=live, name="Prices", enabled=False), AutoReplyRule, _enabled,
         False, True, "Enabled the rule Prices", "autoreply.enabled"),
    Case("calendar-release", "calendar", "/dashboard/calendar/reservations/{id}/release",
         lambda s, w, live: make_reservation(s, w, live, starts_at=_soon()), CalendarReservation, _exists, True, False,
         "Released the reservation", "reservation.released"),
    Case("incident-update", "crisis", "/dashboard/crisis/incidents/{id}/update",
         lambda s, w, live: make_incident(s, w, livemode=live, title="Delivery delays"), CrisisIncident, _status,
         "investigating", "identified", "The incident “Delivery delays” is identified.", "incident.updated",
         data={"i-{id}-status": "identified", "i-{id}-note": "Courier strike in Leeds"}),
    Case("page-publish", "link-in-bio", "/dashboard/link-in-bio/{id}/publish",
         lambda s, w, live: make_page(s, w, livemode=live, title="Ana Ruiz"), LinkPage,
         _status, "draft", "published", "Published the page Ana Ruiz", "linkinbio.published"),
    Case("page-unpublish", "link-in-bio", "/dashboard/link-in-bio/{id}/unpublish",
         lambda s, w, live: make_page(s, w, livemode=live, title="Ana Ruiz", published=True), LinkPage, _status,
         "published", "draft", "Took the page Ana Ruiz down", "linkinbio.unpublished"),
    Case("upload-delete", "uploads", "/dashboard/uploads/{id}/delete",
         lambda s, w, live: make_upload(s, w, livemode=live), Upload, _exists, True, False,
         "Deleted the upload", "upload.deleted"),
]


def state_of(session, case: Case, record_id):
    session.expire_all()
    return case.state(session.get(case.model, record_id))


def form_data(case: Case, record_id) -> dict:
    return {name.format(id=record_id): value for name, value in (case.data or {}).items()}


@pytest.fixture
def security_log(caplog):
    caplog.set_level(logging.INFO, logger="socialpub.security")
    return caplog


def page_of(case: Case, record, mode: str) -> str:
    """The page the record's form is on (the calendar: the week of the reservation)."""
    day = f"&date={record.starts_at.date().isoformat()}" if case.page == "calendar" else ""
    return f"/dashboard/{case.page}/?mode={mode}{day}"


@pytest.mark.parametrize("live", [False, True], ids=["test", "live"])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_an_action_through_its_form(signed_in, session, workspace, member, security_log, case, live):
    if live:  # live mode has no sandbox: a post is published to the workspace's own accounts
        make_account(session, workspace, livemode=True, platform="twitter")
    record = case.make(session, workspace, live)
    record_id, mode = record.id, "live" if live else "test"
    page = signed_in.get(page_of(case, record, mode))
    action = case.path.format(id=record_id) + f"?mode={mode}"
    assert page.status_code == 200 and action in page.text, page.text[-3000:]
    answer = signed_in.post(action, form_data(case, record_id), follow_redirects=False)
    assert answer.status_code == 303, answer.text[-2000:]
    assert answer.headers["Location"].startswith(f"/dashboard/{case.page}/") and f"mode={mode}" in answer.headers["Location"]
    shown = signed_in.get(answer.headers["Location"])
    assert case.says in shown.text, shown.text[-3000:]
    assert state_of(session, case, record_id) == case.after
    [event] = [r for r in security_log.records if getattr(r, "security_event", None) == case.event]
    assert (event.target_id, event.member_id, event.workspace_id, event.mode) == (
        str(record_id), str(member.id), str(workspace.id), mode)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_an_action_without_its_token_or_out_of_reach_changes_nothing(signed_in, session, workspace, other_workspace,
                                                                     case):
    mine = case.make(session, workspace, False)
    mine_id = mine.id
    signed_in.get(f"/dashboard/{case.page}/")
    for token in ({"token": False}, {"token": True, "data_token": "not-the-token"}):
        data = form_data(case, mine_id)
        if "data_token" in token:
            data["csrf_token"] = token["data_token"]
        refused = signed_in.post(case.path.format(id=mine_id), data, token=token["token"])
        assert refused.status_code == 400 and "security token" in refused.text
        assert state_of(session, case, mine_id) == case.before

    # The form of the test-mode page does not reach the live-mode record, nor another workspace's.
    live = case.make(session, workspace, True)
    theirs = case.make(session, other_workspace, False)
    for record in (live, theirs):
        missing = signed_in.post(case.path.format(id=record.id) + "?mode=test", form_data(case, record.id),
                                 from_page=f"/dashboard/{case.page}/")
        assert missing.status_code == 404, missing.text[-2000:]
        assert state_of(session, case, record.id) == case.before


def test_the_calendar_and_the_timeline_name_the_member(signed_in, session, workspace, member):
    post = make_post(session, workspace, content="Ready")
    reservation = make_reservation(session, workspace, False, starts_at=_soon(), title="Launch teaser")
    incident = make_incident(session, workspace, title="Delivery delays")
    signed_in.post(f"/dashboard/posts/{post.id}/publish", from_page="/dashboard/posts/")
    signed_in.post(f"/dashboard/calendar/reservations/{reservation.id}/release", from_page="/dashboard/calendar/")
    signed_in.post(f"/dashboard/crisis/incidents/{incident.id}/update",
                   {f"i-{incident.id}-status": "monitoring", f"i-{incident.id}-note": "Fixed upstream"},
                   from_page="/dashboard/crisis/")
    session.expire_all()
    activity = {(row.type, row.actor) for row in session.execute(
        select(CalendarActivity).where(CalendarActivity.workspace_id == workspace.id)).scalars()}
    assert ("reservation.released", member.email) in activity
    assert any(kind.startswith("post.") and actor == member.email for kind, actor in activity), activity
    last = session.get(CrisisIncident, incident.id).timeline[-1]
    assert (last["status"], last["note"], last["by"]) == ("monitoring", "Fixed upstream", member.email)


def test_refusals_are_shown(signed_in, session, workspace):
    incident = make_incident(session, workspace, status="monitoring", title="Outage")
    backwards = signed_in.post(f"/dashboard/crisis/incidents/{incident.id}/update",
                               {f"i-{incident.id}-status": "investigating"}, from_page="/dashboard/crisis/")
    assert backwards.status_code == 409 and "only moves forward" in backwards.text
    no_status = signed_in.post(f"/dashboard/crisis/incidents/{incident.id}/update",
                               {f"i-{incident.id}-status": ""}, from_page="/dashboard/crisis/")
    assert no_status.status_code == 422
    assert "Not a valid choice" in no_status.text or "Choose the incident" in no_status.text
    too_long = signed_in.post(f"/dashboard/crisis/incidents/{incident.id}/update",
                              {f"i-{incident.id}-status": "resolved", f"i-{incident.id}-note": "x" * 2001},
                              from_page="/dashboard/crisis/")
    assert too_long.status_code == 422 and 'aria-invalid="true"' in too_long.text
    feed = make_feed(session, workspace, status="paused")
    again = signed_in.post(f"/dashboard/feeds/{feed.id}/pause", from_page="/dashboard/feeds/")
    assert again.status_code == 409 and "already paused" in again.text
    session.expire_all()
    assert session.get(CrisisIncident, incident.id).status == "monitoring"


def test_a_feed_is_fetched_now(signed_in, session, workspace, security_log):
    feed = make_feed(session, workspace)
    answer = signed_in.post(f"/dashboard/feeds/{feed.id}/fetch?mode=test", from_page="/dashboard/feeds/",
                            follow_redirects=False)
    assert answer.status_code == 303
    assert "Fetching the feed Example feed now" in signed_in.get(answer.headers["Location"]).text
    assert [r.target_id for r in security_log.records if getattr(r, "security_event", None) == "feed.fetched"] == [
        str(feed.id)]
    paused = make_feed(session, workspace, status="paused")
    refused = signed_in.post(f"/dashboard/feeds/{paused.id}/fetch", from_page="/dashboard/feeds/")
    assert refused.status_code == 409 and "resume it to fetch it" in refused.text


def test_an_incident_form_offers_the_statuses_after_its_own(signed_in, session, workspace):
    incident = make_incident(session, workspace, status="identified", title="Outage")
    page = signed_in.get("/dashboard/crisis/").text
    form = page.split(f'/dashboard/crisis/incidents/{incident.id}/update')[1].split("</form>")[0]
    assert re.findall(r'<option[^>]*value="([a-z]+)"', form) == ["monitoring", "resolved"], form
    assert re.search(r'<option[^>]*selected[^>]*value="monitoring"|<option[^>]*value="monitoring"[^>]*selected', form)
