"""The pages people look at rather than read: analytics and listening as charts drawn
on the server (SVG from pygal, with no script and no inline style, so the dashboard's
Content-Security-Policy is the same as on every page; their look from the dashboard's
own charts.css), their figures in tables beside them; the calendar as a week and a
month of days in the workspace's time zone; a link-in-bio page's preview."""
from __future__ import annotations

import datetime as dt
import re

import pytest

from persistence.calendar import CalendarPreferences
from socialpub import clock
from tests.analytics.conftest import add_account, followers, tracked
from tests.calendar.contract import make_reservation
from tests.linkinbio.factories import make_page
from tests.listening.factories import make_signal
from tests.support.factories import make_post

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 11, 20, 15, 30, tzinfo=UTC)  # a Friday
POLICY = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
SVG = re.compile(r"<svg\b[^>]*>.*?</svg>", re.S)


@pytest.fixture
def now():
    with clock.installed(clock.FakeClock(NOW)):
        yield NOW


def charts_of(html: str) -> list[str]:
    found = SVG.findall(html)
    for svg in found:
        assert 'role="img"' in svg and 'aria-label="' in svg
        assert "<script" not in svg and "<style" not in svg and " style=" not in svg and "<!--" not in svg
    return found


def test_analytics_charts(signed_in, session, workspace, now):
    linkedin = add_account(session, workspace, platform="linkedin", handle="@acme-co")
    tiktok = add_account(session, workspace, platform="tiktok", handle="@acme.tok")
    tracked(session, linkedin, at=NOW - dt.timedelta(days=2), likes=40, comments=2, shares=3, impressions=900)
    tracked(session, linkedin, at=NOW - dt.timedelta(days=1), likes=7, comments=0, shares=0, impressions=300)
    followers(session, linkedin, {NOW.date() - dt.timedelta(days=6): 1000, NOW.date(): 1200})
    followers(session, tiktok, {NOW.date() - dt.timedelta(days=6): 50, NOW.date(): 75})

    response = signed_in.get("/dashboard/analytics/?period=7d")
    assert response.status_code == 200, response.text[-2000:]
    assert response.headers["Content-Security-Policy"] == POLICY
    assert "<script" not in response.text
    assert 'href="/dashboard/charts.css"' in response.text
    drawn = charts_of(response.text)
    assert len(drawn) == 3
    engagements, per_platform, top = drawn
    assert "Engagements a day" in engagements
    assert "LinkedIn" in per_platform and "TikTok" in per_platform
    assert "LinkedIn · Nov 18 15:30" in top
    # The figures beside the charts.
    assert "<th scope=\"row\">2026-11-18</th><td>45</td>" in response.text.replace("\n", "")
    assert "<th scope=\"row\">LinkedIn</th><td>1</td><td>1200</td><td>200</td>" in response.text.replace("\n", "")

    live = signed_in.get("/dashboard/analytics/?period=7d&mode=live")
    assert live.status_code == 200 and "LinkedIn" not in live.text.split("<main")[1]
    assert signed_in.get("/dashboard/analytics/?period=1y").status_code == 400


def test_the_charts_stylesheet(signed_in):
    response = signed_in.get("/dashboard/charts.css")
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/css")
    assert "svg.pygal-chart .axis" in response.text and "#chart-" not in response.text
    assert response.headers["Content-Security-Policy"] == POLICY


def test_listening_volume_and_sentiment_over_time(signed_in, session, workspace, now):
    yesterday = NOW - dt.timedelta(days=1)
    for text in ("I love Acme, wonderful coffee!", "Acme is great and friendly"):
        make_signal(session, workspace, content=text, posted_at=yesterday)
    make_signal(session, workspace, content="Acme is terrible, awful service", posted_at=NOW - dt.timedelta(hours=2))
    make_signal(session, workspace, livemode=True, content="Acme live love", posted_at=yesterday)

    response = signed_in.get("/dashboard/listening/?period=7d")
    assert response.status_code == 200 and response.headers["Content-Security-Policy"] == POLICY
    volume, sentiment = charts_of(response.text)
    assert "Positive" in volume and "Negative" in volume and "Net sentiment" in sentiment
    rows = response.text.replace("\n", "")
    assert "<th scope=\"row\">2026-11-19</th><td>2</td><td>2</td><td>0</td><td>0</td><td>1.0</td>" in rows
    assert "<th scope=\"row\">2026-11-20</th><td>1</td><td>0</td><td>0</td><td>1</td><td>-1.0</td>" in rows
    assert "terrible" in response.text and "Acme live love" not in response.text
    live = signed_in.get("/dashboard/listening/?period=7d&mode=live").text.replace("\n", "")
    assert "<th scope=\"row\">2026-11-19</th><td>1</td><td>1</td>" in live


def test_the_calendar_is_a_week_and_a_month_in_the_workspace_time_zone(signed_in, session, workspace, now):
    # Auckland is 13 hours ahead in November: 12:00 UTC on Friday is 01:00 on Saturday there.
    session.add(CalendarPreferences(workspace_id=workspace.id, livemode=False, timezone="Pacific/Auckland",
                                    week_start="monday", default_view="week",
                                    slots=[{"weekday": "saturday", "time": "09:00", "platforms": ["linkedin"]}]))
    session.commit()
    make_post(session, workspace, content="Weekend teaser", status="scheduled", platforms=["linkedin"],
              scheduled_at=dt.datetime(2026, 11, 21, 12, 0, tzinfo=UTC))  # Sunday 01:00 in Auckland
    make_reservation(session, workspace, False, starts_at=dt.datetime(2026, 11, 20, 20, 0, tzinfo=UTC),
                     title="Launch slot", platforms=("linkedin",))  # Saturday 09:00 in Auckland

    week = signed_in.get("/dashboard/calendar/")
    assert week.status_code == 200, week.text[-2000:]
    assert "Pacific/Auckland" in week.text
    cells = dict(re.findall(r'<td class="[^"]*" data-date="([0-9-]+)">(.*?)</td>', week.text, re.S))
    assert list(cells) == [f"2026-11-{day}" for day in range(16, 23)]  # Monday to Sunday, Auckland's week
    assert "Weekend teaser" in cells["2026-11-22"] and "01:00" in cells["2026-11-22"]
    assert "Launch slot" in cells["2026-11-21"] and "09:00" in cells["2026-11-21"] and "Release" in cells["2026-11-21"]
    # Saturday's 09:00 LinkedIn slot is taken by the reservation; next Saturday's is open.
    assert "Open" not in cells["2026-11-21"]
    assert re.findall(r'<td class="[^"]*today[^"]*" data-date="([0-9-]+)"', week.text) == ["2026-11-21"]

    month = signed_in.get("/dashboard/calendar/?view=month&date=2026-11-05")
    cells = dict(re.findall(r'<td class="[^"]*" data-date="([0-9-]+)">(.*?)</td>', month.text, re.S))
    assert list(cells)[0] == "2026-10-26" and list(cells)[-1] == "2026-12-06" and len(cells) == 42
    assert "Open" in cells["2026-11-28"] and "LinkedIn" in cells["2026-11-28"]
    assert "Launch slot" in cells["2026-11-21"]
    assert 'class="outside' in month.text
    next_week = signed_in.get("/dashboard/calendar/?view=week&date=2026-11-23").text
    assert "Launch slot" not in next_week and "Open" in next_week

    for query in ("view=year", "date=2026-13-01", "date=0001-01-01"):
        assert signed_in.get(f"/dashboard/calendar/?{query}").status_code == 400


def test_a_link_in_bio_preview(signed_in, session, workspace):
    page = make_page(session, workspace, title="Ana Ruiz", bio="Recipes from Seville.", blocks=[
        {"type": "header", "title": "Cook with me"},
        {"type": "link", "title": "My cookbook", "url": "https://example.com/book"},
    ])
    other = make_page(session, workspace, title="Second page")
    shown = signed_in.get(f"/dashboard/link-in-bio/?page={page.id}")
    preview = shown.text.split('data-testid="link-preview"')[1].split("</section>")[0]
    assert "Ana Ruiz" in preview and "Recipes from Seville." in preview
    assert preview.index("Cook with me") < preview.index("My cookbook") and "https://example.com/book" in preview
    first = signed_in.get("/dashboard/link-in-bio/").text  # the newest page, unless one is chosen
    assert "Preview: Second page" in first
    assert signed_in.get(f"/dashboard/link-in-bio/?page={other.id}&mode=live").status_code == 404
