"""A dashboard session ends 12 hours after signing in however busy it is, and after
30 minutes without a request; either way the member lands on the sign-in page with a
word on why. The cookie is re-signed on every request, so neither limit can be left
to the cookie's own expiry."""
from __future__ import annotations

import pytest

from socialpub import clock
from socialpub.dashboard.auth import SESSION_EXPIRED

MAX_SECONDS = 12 * 3600
IDLE_SECONDS = 30 * 60


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as fake:
        yield fake


@pytest.fixture
def signed_in_at_fake_time(fake_clock, browser_for, member):
    browser = browser_for()
    assert browser.sign_in(member.email).status_code == 302
    return browser


def page_status(browser, path="/dashboard/developers/api-keys") -> int:
    return browser.get(path, follow_redirects=False).status_code


def assert_sent_to_sign_in(browser):
    response = browser.get("/dashboard/developers/api-keys", follow_redirects=False)
    assert response.status_code == 302 and "/dashboard/sign-in" in response.headers["location"]
    page = browser.get(response.headers["location"])
    assert page.status_code == 200 and SESSION_EXPIRED in page.text
    # The session is gone, not only refused once.
    assert page_status(browser) == 302


def test_the_defaults_are_twelve_hours_and_thirty_minutes():
    from socialpub.config import Settings

    settings = Settings()
    assert (settings.dashboard_session_max_seconds, settings.dashboard_session_idle_seconds) == (MAX_SECONDS, IDLE_SECONDS)


def test_a_session_left_idle_ends(signed_in_at_fake_time, fake_clock):
    fake_clock.advance(IDLE_SECONDS - 60)
    assert page_status(signed_in_at_fake_time) == 200  # within the idle limit, and counting from now
    fake_clock.advance(IDLE_SECONDS - 60)
    assert page_status(signed_in_at_fake_time) == 200
    fake_clock.advance(IDLE_SECONDS)
    assert_sent_to_sign_in(signed_in_at_fake_time)


def test_a_busy_session_still_ends_twelve_hours_after_signing_in(signed_in_at_fake_time, fake_clock):
    elapsed = 0
    while elapsed + IDLE_SECONDS // 2 < MAX_SECONDS:
        fake_clock.advance(IDLE_SECONDS // 2)
        elapsed += IDLE_SECONDS // 2
        assert page_status(signed_in_at_fake_time) == 200, elapsed
    fake_clock.advance(MAX_SECONDS - elapsed)
    assert_sent_to_sign_in(signed_in_at_fake_time)


def test_a_post_on_an_ended_session_changes_nothing(signed_in_at_fake_time, fake_clock):
    browser = signed_in_at_fake_time
    browser.get("/dashboard/developers/api-keys")
    fake_clock.advance(IDLE_SECONDS)
    response = browser.post("/dashboard/developers/api-keys", {"name": "late", "mode": "test", "scopes": ["posts:read"]},
                            follow_redirects=False)
    assert response.status_code == 302 and "/dashboard/sign-in" in response.headers["location"]


def test_signing_in_again_starts_a_new_lifetime(signed_in_at_fake_time, fake_clock, member):
    fake_clock.advance(MAX_SECONDS)
    assert_sent_to_sign_in(signed_in_at_fake_time)
    assert signed_in_at_fake_time.sign_in(member.email).status_code == 302
    assert page_status(signed_in_at_fake_time) == 200


def test_a_cookie_without_the_times_is_ended(signed_in_at_fake_time, app):
    # Issued before sessions recorded when they began: how old it is cannot be told.
    serializer = app.app.session_interface.get_signing_serializer(app.app)
    browser = signed_in_at_fake_time
    cookie = next(c for c in browser.client.cookies.jar if c.name == "socialpub_session")
    data = serializer.loads(cookie.value)
    del data["signed_in_at"], data["seen_at"]
    browser.client.cookies.set(cookie.name, serializer.dumps(data), domain=cookie.domain, path=cookie.path)
    assert_sent_to_sign_in(browser)
