"""Published pages in a real browser (Debian's Chromium through Playwright) against a
real server (`socialpub serve`, whose scheduler flushes the counts): the page loads
with no Content-Security-Policy violation, a click on a link reaches the stored URL
and is counted in the page's analytics. A phone-sized screenshot of each theme is
kept under tests/artifacts/linkinbio/ (git-ignored).

Chromium is never downloaded: the system's /usr/bin/chromium is used. Under CI
(CI=true) a missing browser fails the run; elsewhere these tests skip.
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

import httpx
import pytest

from tests.support.browser import cli as _cli
from tests.support.browser import serving
from tests.support.processes import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "linkinbio"
PHONE = {"width": 390, "height": 844}
AGENT = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile Safari/604.1"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`socialpub serve` on a free port, SQLite, counts flushed every second; a live key."""
    workdir = tmp_path_factory.mktemp("linkinbio-browser")
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SOCIALPUB_QUEUE_BACKEND")}
    env.update(
        DATABASE_URL=f"sqlite:///{workdir / 'pages.db'}", SOCIALPUB_SECRET_KEY=secrets.token_urlsafe(32),
        SOCIALPUB_LOG_LEVEL="WARNING", SOCIALPUB_VALIDATE_RESPONSES="true", SOCIALPUB_PUBLIC_BASE_URL=origin,
        SOCIALPUB_LINKINBIO_FLUSH_INTERVAL_SECONDS="1", SOCIALPUB_UPLOADS_DIR=str(workdir / "uploads"),
        SOCIALPUB_IMAGE_CACHE_DIR=str(workdir / "image-cache"),
    )
    _cli(env, "db", "upgrade")
    workspace = _cli(env, "workspace", "create", "--name", "Pages Co", "--plan", "business")
    key = _cli(env, "key", "create", "--workspace", workspace["id"], "--name", "pages", "--all-scopes", "--mode",
               "live")["key"]
    with serving(env, workdir, port):
        yield origin, {"Authorization": f"Bearer {key}"}


def _published_page(origin: str, headers: dict, slug: str, preset: str, accent: str) -> str:
    api = f"{origin}/api/v1/linkinbio/pages"
    page = httpx.post(api, headers=headers, json={
        "slug": slug, "title": f"Ana Ruiz ({preset})", "bio": "Recipes from my kitchen in Seville.",
        "theme": {"preset": preset, "accentColor": accent}}).json()["data"]
    for block in ({"type": "header", "title": "Find me"},
                  {"type": "link", "title": "My cookbook", "url": "https://shop.example/cookbook"},
                  {"type": "social", "url": "https://mastodon.example/@ana"},
                  {"type": "text", "text": "New recipes every Friday."},
                  {"type": "email", "title": "Write to me", "email": "ana@example.com"}):
        assert httpx.post(f"{api}/{page['id']}/blocks", headers=headers, json=block).status_code == 201
    assert httpx.post(f"{api}/{page['id']}/publish", headers=headers, json={"published": True}).status_code == 200
    return page["id"]


def test_a_published_page_in_the_browser(playwright_browser, server):
    origin, headers = server
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages = {preset: _published_page(origin, headers, f"ana-{preset}", preset, accent)
             for preset, accent in (("light", "#1a56db"), ("dark", "#e85d04"), ("contrast", "#ffd33d"))}
    context = playwright_browser.new_context(viewport=PHONE, user_agent=AGENT, device_scale_factor=2, is_mobile=True)
    # The link's own site is not reachable from the test: the browser is answered here.
    reached = []
    context.route("https://shop.example/**", lambda route: (reached.append(route.request.url),
                                                            route.fulfill(status=200, body="the shop")))
    problems: list[str] = []
    page = context.new_page()
    page.on("console", lambda message: problems.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    for preset in pages:
        response = page.goto(f"{origin}/p/ana-{preset}")
        assert response.status == 200
        assert "default-src 'none'" in response.headers["content-security-policy"]
        assert page.get_by_role("heading", level=1).inner_text() == f"Ana Ruiz ({preset})"
        assert page.get_by_role("main").count() == 1
        page.screenshot(path=str(ARTIFACTS / f"page-{preset}.png"), full_page=True)
    # The stylesheet applied (the CSP allowed it by its hash): the buttons are styled.
    page.goto(f"{origin}/p/ana-dark")
    button = page.get_by_role("link", name="My cookbook")
    assert button.evaluate("link => getComputedStyle(link).display") == "block"
    assert button.evaluate("link => getComputedStyle(link).backgroundColor") == "rgb(232, 93, 4)"
    assert problems == [], problems

    button.click()
    page.wait_for_url("https://shop.example/cookbook")
    assert reached == ["https://shop.example/cookbook"]
    context.close()

    analytics = f"{origin}/api/v1/linkinbio/pages/{pages['dark']}/analytics"
    deadline = time.monotonic() + 30
    while True:  # the server's scheduler flushes the counts every second
        found = httpx.get(analytics, headers=headers).json()["data"]
        if found["clicks"] >= 1 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert (found["views"], found["clicks"], found["uniqueClicks"]) == (1, 1, 1), found
    [cookbook] = [each for each in found["blocks"] if each["title"] == "My cookbook"]
    assert cookbook["clicks"] == 1
