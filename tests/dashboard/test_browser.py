"""The dashboard in a real browser (Debian's Chromium through Playwright) against a
real server: sign in, create a key and use it, roll it, revoke it; add a webhook
endpoint and see its test event arrive, signed, and be logged. A new value is shown
once: reloading the page shows it no more. A screenshot of each page is kept under
tests/artifacts/.

The browser and the server are tests/support/browser.py's (one of each for the run).
"""
from __future__ import annotations

import shutil

import httpx
import pytest

from tests.support.browser import ARTIFACTS, EMAIL, PASSWORD
from tests.support.webhook_receiver import Receiver

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def artifacts():
    shutil.rmtree(ARTIFACTS / "dashboard", ignore_errors=True)
    (ARTIFACTS / "dashboard").mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / "dashboard"


@pytest.fixture
def page(playwright_browser, server, artifacts):
    context = playwright_browser.new_context(base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/dashboard/sign-in")
    page.screenshot(path=str(artifacts / "01-sign-in.png"), full_page=True)
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/dashboard/")
    page.screenshot(path=str(artifacts / "02-overview.png"), full_page=True)
    yield page
    context.close()


def _status(server, value: str) -> int:
    return httpx.get(f"{server}/api/v1/posts", headers={"Authorization": f"Bearer {value}"}, timeout=10).status_code


def test_key_created_rolled_and_revoked_in_the_browser(page, server, artifacts):
    page.get_by_role("navigation").get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("Browser key")
    page.get_by_label("posts:read").check()
    page.get_by_label("posts:write").check()
    page.get_by_role("button", name="Create key").click()
    value = page.get_by_label("Key value").input_value()
    page.screenshot(path=str(artifacts / "03-key-created.png"), full_page=True)
    assert value.startswith("svc_test_")
    assert _status(server, value) == 200
    page.reload()  # shows the list again, without the value and without creating another key
    assert page.get_by_label("Key value").count() == 0
    assert page.locator("tr", has_text="Browser key").count() == 1

    row = page.locator("tr", has_text="Browser key")
    row.get_by_label("Old value stops working").select_option("0")
    row.get_by_role("button", name="Roll key Browser key").click()
    rolled = page.get_by_label("Key value").input_value()
    page.screenshot(path=str(artifacts / "04-key-rolled.png"), full_page=True)
    assert rolled != value
    page.reload()  # does not roll again, which would end the value just shown
    assert page.get_by_label("Key value").count() == 0
    assert _status(server, rolled) == 200
    assert _status(server, value) == 401

    page.locator("tr", has_text="Browser key").get_by_role("button", name="Revoke key Browser key").click()
    page.get_by_text("Revoked the key").wait_for()
    page.screenshot(path=str(artifacts / "05-key-revoked.png"), full_page=True)
    assert _status(server, rolled) == 401
    assert page.get_by_label("Key value").count() == 0  # the value is not shown again


def test_webhook_test_event_is_delivered_and_logged(page, server, artifacts):
    with Receiver() as receiver:
        page.get_by_role("navigation").get_by_role("link", name="Webhooks").click()
        page.get_by_label("Endpoint URL").fill(receiver.url)
        page.get_by_label("Description").fill("Local receiver")
        page.get_by_role("button", name="Add endpoint").click()
        secret = page.get_by_role("textbox", name="Signing secret").input_value()
        page.screenshot(path=str(artifacts / "06-webhook-added.png"), full_page=True)
        assert secret.startswith("whsec_")
        receiver.secret = secret  # from now on, every delivery's signature is checked
        page.reload()
        assert page.get_by_role("textbox", name="Signing secret").count() == 0
        page.get_by_role("button", name="Send test event").click()
        page.get_by_text("Delivered test.ping").wait_for()
        page.screenshot(path=str(artifacts / "07-webhook-delivered.png"), full_page=True)
        assert receiver.received and receiver.received[-1].json["type"] == "test.ping"
        assert all(request.verified for request in receiver.received)
        log = page.get_by_test_id("delivery-log")
        assert "succeeded" in log.inner_text() and "test.ping" in log.inner_text()

        page.get_by_role("navigation").get_by_role("link", name="Webhooks").click()
        page.get_by_role("heading", name="Webhooks", exact=True).wait_for()
        page.screenshot(path=str(artifacts / "08-webhooks-list.png"), full_page=True)
        endpoints = page.get_by_role("table", name="Webhook endpoints of this workspace")
        assert endpoints.get_by_role("link", name=receiver.url).count() == 1
        assert "test.ping" in page.get_by_test_id("delivery-log").inner_text()


def test_brand_context_and_accounts_pages(page, server, artifacts):
    page.get_by_role("link", name="Brand context").first.click()
    page.get_by_label("Voice").fill("Warm and plain-spoken.")
    page.get_by_label("Hashtags").fill("coffee")
    page.get_by_role("button", name="Save brand context").click()
    page.get_by_text("Saved the brand context.").wait_for()
    page.screenshot(path=str(artifacts / "09-brand-context.png"), full_page=True)
    page.get_by_role("link", name="Connected accounts").first.click()
    page.get_by_role("heading", name="Connected accounts").wait_for()
    page.screenshot(path=str(artifacts / "10-accounts.png"), full_page=True)
    assert "sandbox-twitter" in page.content()
