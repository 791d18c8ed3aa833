"""The pages of the workspace's areas (/dashboard/<area>/): each lists the records of
the mode chosen (test unless `?mode=live`), never the other mode's nor another
workspace's; an unknown mode is refused; signed out, each leads to signing in and
back; every page carries the dashboard's headers."""
from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.autoreply.factories import make_rule
from tests.calendar.contract import make_reservation
from tests.competitors.factories import make_competitor
from tests.crisis.factories import make_incident
from tests.dashboard.test_headers import assert_dashboard_headers
from tests.influencers.factories import make_influencer, make_payment
from tests.linkinbio.factories import make_page
from tests.listening.factories import make_monitor, make_signal
from tests.rss.contract import make_feed
from tests.support.factories import make_bulk_operation, make_post
from tests.templates.factories import make_template
from tests.uploads.factories import make_upload


def _post(session, workspace, livemode, marker):
    make_post(session, workspace, livemode=livemode, content=f"Post {marker}")


def _soon(hours: int) -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0) + dt.timedelta(hours=hours)


def _scheduled(session, workspace, livemode, marker):
    make_post(session, workspace, livemode=livemode, content=f"Post {marker}", status="scheduled",
              scheduled_at=_soon(2))
    return _soon(2)


def _reservation(session, workspace, livemode, marker):
    make_reservation(session, workspace, livemode, title=f"Reserved {marker}", starts_at=_soon(3))
    return _soon(3)


def _bulk(session, workspace, livemode, marker):
    # The operation shows by its action and progress; the marker is its post count.
    make_bulk_operation(session, workspace, livemode=livemode, action="archive", total=len(marker),
                        post_ids=[f"00000000-0000-4000-8000-{index:012d}" for index in range(len(marker))])


def _payment(session, workspace, livemode, marker):
    make_payment(session, workspace, make_influencer(session, workspace, livemode=livemode, name=f"Paid {marker}"),
                 livemode=livemode)


def _signal(session, workspace, livemode, marker):
    make_monitor(session, workspace, livemode=livemode, name=f"Monitor {marker}", keywords=("acme",))
    make_signal(session, workspace, livemode=livemode, content=f"Acme signal {marker}",
                posted_at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1))


# (page, what makes a record of `marker` in a workspace and mode)
LISTED = [
    ("posts", _post),
    ("calendar", _scheduled),
    ("calendar", _reservation),
    ("feeds", lambda s, w, live, m: make_feed(s, w, livemode=live, title=f"Feed {m}")),
    ("templates", lambda s, w, live, m: make_template(s, w, livemode=live, name=f"Template {m}")),
    ("auto-reply", lambda s, w, live, m: make_rule(s, w, livemode=live, name=f"Rule {m}")),
    ("listening", _signal),
    ("crisis", lambda s, w, live, m: make_incident(s, w, livemode=live, title=f"Incident {m}")),
    ("competitors", lambda s, w, live, m: make_competitor(s, w, livemode=live, name=f"Rival {m}")),
    ("influencers", lambda s, w, live, m: make_influencer(s, w, livemode=live, name=f"Creator {m}")),
    ("influencers", _payment),
    ("link-in-bio", lambda s, w, live, m: make_page(s, w, livemode=live, title=f"Links {m}")),
    ("uploads", lambda s, w, live, m: make_upload(s, w, livemode=live, status="pending", filename=f"f-{m}.png")),
]
PAGES = ["posts", "calendar", "analytics", "feeds", "templates", "auto-reply", "listening", "crisis", "competitors",
         "influencers", "link-in-bio", "uploads"]


@pytest.mark.parametrize("area, make", LISTED, ids=[f"{area}-{make.__name__}" for area, make in LISTED])
def test_a_page_lists_the_chosen_mode_of_its_own_workspace(signed_in, session, workspace, other_workspace, area,
                                                           make):
    when = make(session, workspace, False, "alpha-test")
    make(session, workspace, True, "bravo-live")
    make(session, other_workspace, False, "charlie-theirs")
    make(session, other_workspace, True, "delta-theirs")
    # The calendar opens at the week of what it shows (in UTC, the calendar's default
    # zone): two hours from now is next week on a Sunday evening.
    at = f"date={when.date().isoformat()}&" if isinstance(when, dt.datetime) else ""
    test_page = signed_in.get(f"/dashboard/{area}/?{at}")
    live_page = signed_in.get(f"/dashboard/{area}/?{at}mode=live")
    assert test_page.status_code == 200 and live_page.status_code == 200, (test_page.text[-2000:], live_page.text[-2000:])
    if make is _bulk:
        return
    assert "alpha-test" in test_page.text and "bravo-live" not in test_page.text
    assert "bravo-live" in live_page.text and "alpha-test" not in live_page.text
    for page in (test_page, live_page):
        assert "charlie-theirs" not in page.text and "delta-theirs" not in page.text


def test_the_posts_page_shows_the_bulk_operations_of_its_mode(signed_in, session, workspace, other_workspace):
    _bulk(session, workspace, False, "xyz")  # 3 posts
    _bulk(session, workspace, True, "abcdefg")  # 7 posts
    _bulk(session, other_workspace, False, "abcde")  # 5 posts
    assert "0 of 3" in signed_in.get("/dashboard/posts/").text
    live = signed_in.get("/dashboard/posts/?mode=live").text
    assert "0 of 7" in live and "0 of 3" not in live and "0 of 5" not in live


@pytest.mark.parametrize("area", PAGES)
def test_every_page_answers_in_both_modes_and_refuses_another(signed_in, area):
    for mode, current in (("", "Test mode"), ("?mode=test", "Test mode"), ("?mode=live", "Live mode")):
        response = signed_in.get(f"/dashboard/{area}/{mode}")
        assert response.status_code == 200, response.text[-2000:]
        assert f'aria-current="page">{current}</a>' in response.text
        assert 'aria-current="page"' in response.text.split("</nav>")[0]  # the page's own link in the navigation
        assert "<script" not in response.text
        assert_dashboard_headers(response)
    refused = signed_in.get(f"/dashboard/{area}/?mode=production")
    assert refused.status_code == 400 and "mode must be test or live" in refused.text


@pytest.mark.parametrize("area", PAGES)
def test_signed_out_a_page_leads_to_signing_in_and_back(browser_for, area):
    response = browser_for().get(f"/dashboard/{area}/", follow_redirects=False)
    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert location.path == "/dashboard/sign-in"
    assert parse_qs(location.query) == {"next": [f"/dashboard/{area}/"]}  # no stray "?"


def test_the_sign_in_redirect_keeps_a_query_and_adds_no_stray_question_mark(browser_for, member):
    browser = browser_for()
    bare = browser.get("/dashboard/", follow_redirects=False)
    assert urlsplit(bare.headers["Location"]).query == "next=/dashboard/"
    with_query = browser.get("/dashboard/calendar/?mode=live&view=month", follow_redirects=False)
    assert parse_qs(urlsplit(with_query.headers["Location"]).query) == {"next": ["/dashboard/calendar/?mode=live&view=month"]}
    browser.get(with_query.headers["Location"])
    signed = browser.post(with_query.headers["Location"], {"email": member.email,
                                                           "password": "correct horse battery staple"},
                          follow_redirects=False)
    assert signed.status_code == 302 and signed.headers["Location"] == "/dashboard/calendar/?mode=live&view=month"


def test_platforms_are_spelled_as_their_owners_spell_them(signed_in, session, workspace):
    make_post(session, workspace, content="Everywhere", platforms=["linkedin", "tiktok", "youtube", "twitter"])
    page = signed_in.get("/dashboard/posts/").text
    assert "LinkedIn, TikTok, YouTube, X" in page
    assert "Linkedin" not in page and "Tiktok" not in page and "Youtube" not in page
    accounts = signed_in.get("/dashboard/accounts").text
    assert ">LinkedIn</option>" in accounts and ">TikTok</option>" in accounts and ">YouTube</option>" in accounts
