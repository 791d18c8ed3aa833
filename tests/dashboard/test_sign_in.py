"""Signing in: cookies, CSRF on every form, wrong passwords, the sign-in rate limit,
signing out; and the dashboard living beside the API without disturbing it."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy.exc
from sqlalchemy import func, select

from persistence.keys import ApiKey
from socialpub import clock
from socialpub.app import create_app
from tests.support.settings import test_settings
from socialpub.request import trust_proxies
from tests.support.dashboard import PASSWORD, Browser, csrf_token, make_member

PER_EMAIL, PER_ADDRESS, PER_EMAIL_HOURLY = 4, 7, 10


@pytest.fixture
def settings(database_url, test_redis_url):
    return test_settings(
        database_url, test_redis_url, sign_in_attempts_per_email=PER_EMAIL, sign_in_attempts_per_address=PER_ADDRESS,
        sign_in_failures_per_email_per_hour=PER_EMAIL_HOURLY,
    )


def signed_in_now(browser) -> bool:
    response = browser.get("/dashboard/", follow_redirects=False)
    return response.status_code == 200


def test_sign_in_page_is_accessible_html(browser_for):
    response = browser_for().get("/dashboard/sign-in")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    assert '<label for="email">Email</label>' in html and '<label for="password">Password</label>' in html
    assert "<h1>" in html and 'lang="en"' in html
    assert response.headers["Cache-Control"] == "no-store" and response.headers["X-Frame-Options"] == "DENY"


def test_sign_in_sets_a_hardened_session_cookie(browser_for, member):
    browser = browser_for()
    response = browser.sign_in(member.email)
    assert response.status_code == 302 and response.headers["location"].endswith("/dashboard/")
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/dashboard" in cookie
    assert "secure" not in cookie.replace("samesite", "")  # plain http here
    assert signed_in_now(browser)
    assert member.email in browser.get("/dashboard/").text


def test_cookie_is_secure_over_https(app, member):
    with app.test_client(base_url="https://testserver", client=("10.200.0.1", 1)) as client:
        token = csrf_token(client.get("/dashboard/sign-in").text)
        # Over https, Flask-WTF also checks that the form came from this origin.
        cross_site = client.post("/dashboard/sign-in", data={"email": member.email, "password": PASSWORD, "csrf_token": token},
                                 headers={"Referer": "https://evil.example/"}, follow_redirects=False)
        assert cross_site.status_code == 400
        response = client.post("/dashboard/sign-in", data={"email": member.email, "password": PASSWORD, "csrf_token": token},
                               headers={"Referer": "https://testserver/dashboard/sign-in"}, follow_redirects=False)
    assert response.status_code == 302
    assert "; secure" in response.headers["set-cookie"].lower()


def test_pages_need_a_signed_in_member(browser_for):
    browser = browser_for()
    for path in ("/dashboard/", "/dashboard/developers/api-keys", "/dashboard/developers/webhooks",
                 "/dashboard/brand-context", "/dashboard/accounts"):
        response = browser.get(path, follow_redirects=False)
        assert response.status_code == 302, path
        assert "/dashboard/sign-in" in response.headers["location"]


def test_wrong_password_is_refused(browser_for, member):
    browser = browser_for()
    response = browser.sign_in(member.email, "not the password at all")
    assert response.status_code == 401
    assert "do not match" in response.text
    unknown = browser.sign_in("nobody@example.com")
    assert unknown.status_code == 401 and "do not match" in unknown.text  # the same answer: no email probing
    assert not signed_in_now(browser)


def test_empty_form_says_what_is_missing(browser_for):
    browser = browser_for()
    browser.get("/dashboard/sign-in")
    response = browser.post("/dashboard/sign-in", {"email": "", "password": ""})
    assert response.status_code == 422
    assert "Enter your email address." in response.text and "Enter your password." in response.text


def test_sign_in_without_csrf_token_is_refused(browser_for, member):
    browser = browser_for()
    browser.get("/dashboard/sign-in")
    response = browser.post("/dashboard/sign-in", {"email": member.email, "password": PASSWORD}, token=False)
    assert response.status_code == 400 and "security token" in response.text
    assert not signed_in_now(browser)
    forged = browser.post("/dashboard/sign-in", {"email": member.email, "password": PASSWORD, "csrf_token": "forged"})
    assert forged.status_code == 400 and not signed_in_now(browser)


def test_every_form_needs_the_csrf_token(signed_in, session, workspace):
    before = session.execute(select(func.count()).select_from(ApiKey)).scalar_one()
    response = signed_in.post(
        "/dashboard/developers/api-keys", {"name": "sneaky", "mode": "test", "scopes": "posts:read"}, token=False
    )
    assert response.status_code == 400
    for path in ("/dashboard/brand-context", "/dashboard/accounts", "/dashboard/developers/webhooks", "/dashboard/sign-out"):
        assert signed_in.post(path, {}, token=False).status_code == 400, path
    assert session.execute(select(func.count()).select_from(ApiKey)).scalar_one() == before
    assert signed_in_now(signed_in)  # the refused sign-out did not sign out either


def test_a_token_from_another_session_is_refused(signed_in, browser_for, session, workspace):
    other = browser_for()
    other.sign_in(make_member(session, workspace).email)
    foreign_token = csrf_token(other.get("/dashboard/developers/api-keys").text)
    response = signed_in.post(
        "/dashboard/developers/api-keys", {"name": "x", "mode": "test", "scopes": "posts:read", "csrf_token": foreign_token}
    )
    assert response.status_code == 400


def test_failures_per_email_lock_out_that_address_only(browser_for, member):
    attacker = browser_for()
    for _ in range(PER_EMAIL):
        assert attacker.sign_in(member.email, "wrong password!!").status_code == 401
    refused = attacker.sign_in(member.email)  # even the right password, from there
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0 and "Too many sign-in attempts" in refused.text
    assert not signed_in_now(attacker)
    # The member, from an address that has not been failing, still gets in.
    owner = browser_for()
    assert owner.sign_in(member.email).status_code == 302 and signed_in_now(owner)
    assert attacker.sign_in(member.email).status_code == 429  # and the attacker is still held


def test_a_lock_out_ends_when_its_window_moves_on(browser_for, member):
    with clock.installed(clock.FakeClock()) as fake:
        attacker = browser_for()
        for _ in range(PER_EMAIL):
            attacker.sign_in(member.email, "wrong password!!")
        assert attacker.sign_in(member.email).status_code == 429
        fake.advance(15 * 60 + 1)
        assert attacker.sign_in(member.email).status_code == 302


def test_a_success_forgets_that_address_s_failures_for_the_email(browser_for, member):
    browser = browser_for()
    for _ in range(PER_EMAIL - 1):
        assert browser.sign_in(member.email, "wrong password!!").status_code == 401
    assert browser.sign_in(member.email).status_code == 302
    assert browser.post("/dashboard/sign-out", from_page="/dashboard/", follow_redirects=False).status_code == 302
    for _ in range(PER_EMAIL - 1):
        assert browser.sign_in(member.email, "wrong password!!").status_code == 401
    assert browser.sign_in(member.email).status_code == 302


def sign_in_from(application, address: str, email: str, password: str = PASSWORD) -> int:
    """The status of one sign-in from a new browser at that address."""
    with application.test_client(client=(address, 50000)) as client:
        return Browser(client).sign_in(email, password).status_code


def test_successful_sign_ins_do_not_count_against_the_address(app, session, workspace):
    # An office behind one address: its members sign in all day.
    office = an_address()
    colleagues = [make_member(session, workspace) for _ in range(3)]
    for round_ in range(PER_ADDRESS + 1):
        assert sign_in_from(app, office, colleagues[round_ % 3].email) == 302, round_


def test_failures_per_address_are_limited(app, browser_for, session, workspace):
    address = an_address()
    fresh = make_member(session, workspace)
    for attempt in range(PER_ADDRESS - 1):
        assert sign_in_from(app, address, f"guess-{attempt}@example.com", "wrong password!!") == 401
    # Sign-ins between the failures use up nothing.
    for _ in range(3):
        assert sign_in_from(app, address, fresh.email) == 302
    assert sign_in_from(app, address, "guess-last@example.com", "wrong password!!") == 401
    assert sign_in_from(app, address, fresh.email) == 429
    assert browser_for().sign_in(fresh.email).status_code == 302  # another address is not held back


def test_failures_per_email_from_everywhere_are_limited(browser_for, member):
    with clock.installed(clock.FakeClock()) as fake:
        failed = 0
        while failed < PER_EMAIL_HOURLY:
            # Each address stays under its own (email, address) limit.
            guesser = browser_for()
            for _ in range(min(PER_EMAIL - 1, PER_EMAIL_HOURLY - failed)):
                assert guesser.sign_in(member.email, "wrong password!!").status_code == 401
                failed += 1
            fake.advance(60)
        refused = browser_for().sign_in(member.email)
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 15 * 60
        fake.advance(3600)
        assert browser_for().sign_in(member.email).status_code == 302


def test_attempts_count_before_the_password_is_checked(app, member):
    # Guesses in flight together: none of them has failed yet when the next arrives.
    from socialpub.dashboard import auth

    address = an_address()
    with app.app.test_request_context():
        limiter = auth.sign_in_limiter()
        verdicts = [limiter.attempt(member.email, address) for _ in range(PER_EMAIL + 1)]
    assert [attempt.refused for attempt in verdicts] == [False] * PER_EMAIL + [True]
    assert verdicts[PER_EMAIL].retry_after > 0 and verdicts[PER_EMAIL].refused_by == "email_and_address"


def an_address() -> str:
    """A client address no other test (or earlier run, with Redis) has counted against."""
    number = uuid.uuid4().int
    return f"10.{number % 250}.{(number >> 8) % 250}.{(number >> 16) % 250 + 1}"


def proxied_browser(application, proxy: str, forwarded_for: str | None = None, proto: str | None = None):
    """A browser whose requests reach the app through the proxy at that address."""
    headers = {}
    if forwarded_for:
        headers["X-Forwarded-For"] = forwarded_for
    if proto:
        headers["X-Forwarded-Proto"] = proto
        # Over https, Flask-WTF also wants a same-site Referer, as a browser sends.
        headers["Referer"] = f"{proto}://testserver/dashboard/sign-in"
    client = application.test_client(client=(proxy, 40000), headers=headers)
    client.__enter__()
    return Browser(client)


@pytest.fixture
def app_behind_one_proxy(settings, db):
    application = create_app(settings, database=db)
    trust_proxies(application, 1)
    yield application
    application.app.extensions["socialpub"].queue.close()


def session_cookie(response) -> str:
    return next(value for name, value in response.headers.multi_items()
                if name == "set-cookie" and value.startswith("socialpub_session="))


class TestBehindAProxy:
    def test_with_one_trusted_hop_forwarded_https_gives_a_secure_cookie(self, app_behind_one_proxy, member):
        proxy = an_address()
        browser = proxied_browser(app_behind_one_proxy, proxy, an_address(), "https")
        page = browser.get("/dashboard/sign-in")
        cookie = session_cookie(page)
        assert "Secure" in cookie
        # The test client talks plain http, so it keeps a Secure cookie to itself: sent by hand.
        response = browser.post("/dashboard/sign-in", {"email": member.email, "password": PASSWORD},
                                headers={"Cookie": cookie.split(";")[0]}, follow_redirects=False)
        assert response.status_code == 302 and "Secure" in session_cookie(response)
        plain = proxied_browser(app_behind_one_proxy, proxy, an_address(), "http").sign_in(member.email)
        assert plain.status_code == 302 and "Secure" not in session_cookie(plain)

    def test_with_one_trusted_hop_forwarded_addresses_are_limited_separately(self, app_behind_one_proxy, session, workspace):
        proxy, client = an_address(), an_address()
        guesser = proxied_browser(app_behind_one_proxy, proxy, client)
        for attempt in range(PER_ADDRESS):
            assert guesser.sign_in(f"guess-{attempt}@example.com", "wrong password!!").status_code == 401
        fresh = make_member(session, workspace)
        assert guesser.sign_in(fresh.email).status_code == 429
        # Another client behind the same proxy; an entry the client wrote itself, before
        # the one the proxy added, is not believed.
        other = proxied_browser(app_behind_one_proxy, proxy, f"{client}, {an_address()}")
        assert other.sign_in(fresh.email).status_code == 302

    def test_with_no_trusted_hop_forwarded_headers_are_ignored(self, app, member):
        proxy = an_address()
        response = proxied_browser(app, proxy, an_address(), "https").sign_in(member.email)
        # Over https Flask-WTF would have checked the Referer: this was taken as http.
        assert response.status_code == 302 and "Secure" not in session_cookie(response)
        for attempt in range(PER_ADDRESS):
            browser = proxied_browser(app, proxy, an_address())
            assert browser.sign_in(f"guess-{attempt}@example.com", "wrong password!!").status_code == 401
        # Every request came from the proxy's address: that is the one limited.
        assert proxied_browser(app, proxy, an_address()).sign_in(member.email).status_code == 429

    def test_the_number_of_hops_must_be_a_whole_number(self, app):
        for bad in (-1, 1.5, "1", True):
            with pytest.raises(ValueError, match="SOCIALPUB_TRUSTED_PROXY_HOPS"):
                trust_proxies(app, bad)


def test_sign_out_ends_the_session(signed_in):
    signed_in.get("/dashboard/")
    response = signed_in.post("/dashboard/sign-out", follow_redirects=False)
    assert response.status_code == 302
    assert not signed_in_now(signed_in)


def test_signing_out_ends_copies_of_the_cookie_too(browser_for, member):
    browser = browser_for()
    assert browser.sign_in(member.email).status_code == 302
    stolen = browser_for()
    for cookie in browser.client.cookies.jar:
        stolen.client.cookies.set(cookie.name, cookie.value, domain=cookie.domain, path=cookie.path)
    assert signed_in_now(stolen), "the copy works while the session lasts"
    browser.get("/dashboard/")
    assert browser.post("/dashboard/sign-out", follow_redirects=False).status_code == 302
    assert not signed_in_now(stolen)
    assert browser.sign_in(member.email).status_code == 302, "signing in again starts a new session"
    assert signed_in_now(browser)


def test_next_only_leads_within_the_dashboard(browser_for, member):
    browser = browser_for()
    browser.get("/dashboard/sign-in")
    response = browser.post("/dashboard/sign-in?next=https://evil.example/x", {"email": member.email, "password": PASSWORD},
                            follow_redirects=False)
    assert response.headers["location"].endswith("/dashboard/")
    browser = browser_for()
    browser.get("/dashboard/sign-in")
    response = browser.post("/dashboard/sign-in?next=/dashboard/accounts", {"email": member.email, "password": PASSWORD},
                            follow_redirects=False)
    assert response.headers["location"].endswith("/dashboard/accounts")


class TestBesideTheApi:
    def test_dashboard_needs_no_api_key_and_answers_html_errors(self, browser_for):
        browser = browser_for()
        assert browser.get("/dashboard/sign-in").status_code == 200
        missing = browser.get("/dashboard/no-such-page")
        assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
        wrong_method = browser.client.delete("/dashboard/sign-in")
        assert wrong_method.status_code == 405 and wrong_method.headers["content-type"].startswith("text/html")

    def test_api_keeps_its_json_errors_and_needs_no_csrf(self, client, key):
        missing = client.get("/api/v1/no-such-route", headers=key.headers)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "resource_not_found"
        created = client.post("/api/v1/posts", json={"content": "hi", "platforms": ["twitter"]}, headers=key.headers)
        assert created.status_code == 201, created.text
        assert "set-cookie" not in created.headers

    def test_a_database_outage_is_a_503_page_not_a_500(self, signed_in, monkeypatch):
        from socialpub.keys import service as api_keys

        def unavailable(**_kwargs):
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("connection refused"))

        monkeypatch.setattr(api_keys, "list_api_keys", unavailable)
        page = signed_in.get("/dashboard/developers/api-keys")
        assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
        assert int(page.headers["retry-after"]) > 0
        assert "The database is unavailable" in page.text and "Traceback" not in page.text

    def test_an_unreachable_database_is_a_503_page_from_sign_in_on(self):
        app = create_app(test_settings("postgresql+psycopg://postgres@127.0.0.1:1/nowhere"))
        try:
            with app.test_client() as client:
                assert client.get("/dashboard/sign-in").status_code == 200  # the form itself needs no database
                token = csrf_token(client.get("/dashboard/sign-in").text)
                refused = client.post("/dashboard/sign-in", data={"csrf_token": token, "email": "a@example.com",
                                                                  "password": PASSWORD})
                assert refused.status_code == 503 and "retry-after" in refused.headers
                assert client.get("/dashboard/developers/api-keys", follow_redirects=False).status_code in (302, 303)
        finally:
            app.app.extensions["socialpub"].close()
