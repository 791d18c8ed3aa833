"""Every response under /dashboard carries the dashboard's headers: error pages no
view of it answered (405, 404), routing redirects and sign-in redirects included."""
from __future__ import annotations

import pytest

from socialpub.dashboard.plumbing import is_dashboard_path

DASHBOARD_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def assert_dashboard_headers(response):
    for name, value in DASHBOARD_HEADERS.items():
        assert response.headers.get(name) == value, (name, response.status_code, dict(response.headers))
    policy = response.headers.get("Content-Security-Policy", "")
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


@pytest.mark.parametrize("method, path, status", [
    ("DELETE", "/dashboard/sign-in", 405),
    ("PUT", "/dashboard/developers/api-keys", 405),
    ("POST", "/dashboard/", 405),
    ("GET", "/dashboard", 308),  # to /dashboard/
    ("GET", "/dashboard/", 302),  # signed out: to the sign-in page
    ("GET", "/dashboard/no-such-page", 404),
    ("DELETE", "/dashboard/no-such-page", 405),
])
def test_every_dashboard_answer_has_the_headers(browser_for, method, path, status):
    response = browser_for().client.request(method, path, follow_redirects=False)
    assert response.status_code == status, response.text
    assert_dashboard_headers(response)


def test_signed_in_error_pages_have_the_headers(signed_in):
    for response in (signed_in.client.delete("/dashboard/"), signed_in.get("/dashboard/developers/webhooks/not-an-id")):
        assert response.status_code in (404, 405)
        assert_dashboard_headers(response)


def test_only_paths_under_the_dashboard_are_its_own():
    assert is_dashboard_path("/dashboard") and is_dashboard_path("/dashboard/x/y")
    assert not is_dashboard_path("/dashboardish") and not is_dashboard_path("/api/v1/dashboard")
