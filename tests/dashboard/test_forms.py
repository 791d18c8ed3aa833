"""Every dashboard form refuses a NUL character in any field with a message on that
field (PostgreSQL cannot store one), and nothing is changed."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from persistence.ai import BrandContext
from persistence.accounts import ConnectedAccount
from persistence.keys import ApiKey
from persistence.webhooks import WebhookEndpoint
from socialpub.dashboard.forms import NUL_REFUSED
from tests.support.dashboard import PASSWORD


def count(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model)).scalar_one()


def test_sign_in_with_a_nul_in_the_email_is_refused(browser_for, member):
    browser = browser_for()
    browser.get("/dashboard/sign-in")
    response = browser.post("/dashboard/sign-in", {"email": member.email + "\x00", "password": PASSWORD})
    assert response.status_code == 422 and NUL_REFUSED in response.text
    assert browser.get("/dashboard/", follow_redirects=False).status_code == 302  # not signed in


@pytest.mark.parametrize(
    "page, fields, model",
    [
        ("/dashboard/developers/api-keys", {"name": "Sched\x00uler", "mode": "test", "scopes": ["posts:read"]}, ApiKey),
        ("/dashboard/developers/api-keys", {"name": "Scheduler", "mode": "test", "scopes": ["posts:read\x00"]}, ApiKey),
        ("/dashboard/developers/webhooks", {"url": "https://hooks.example/in", "mode": "test", "description": "Orders\x00"}, WebhookEndpoint),
        ("/dashboard/developers/webhooks", {"url": "https://hooks.example/in\x00", "mode": "test"}, WebhookEndpoint),
        ("/dashboard/brand-context", {"voice": "Warm\x00"}, BrandContext),
        ("/dashboard/brand-context", {"audience": "Owners\x00"}, BrandContext),
        ("/dashboard/brand-context", {"banned_words": "cheap\nsyn\x00ergy"}, BrandContext),
        ("/dashboard/brand-context", {"hashtags": "coffee\x00"}, BrandContext),
        ("/dashboard/brand-context", {"sample_posts": "Fresh beans\x00"}, BrandContext),
        ("/dashboard/accounts", {"platform": "twitter", "mode": "test", "connector": "sandbox", "handle": "@ac\x00me"}, ConnectedAccount),
    ],
)
def test_a_nul_in_any_field_is_refused_on_that_field(signed_in, session, page, fields, model):
    before = count(session, model)
    signed_in.get(page)
    response = signed_in.post(page, fields)
    assert response.status_code == 422, response.text
    assert NUL_REFUSED in response.text
    assert count(session, model) == before


def test_a_key_roll_with_a_nul_is_refused(signed_in, session, workspace):
    from tests.support.factories import make_key

    key = make_key(session, workspace)
    signed_in.get("/dashboard/developers/api-keys")
    response = signed_in.post(f"/dashboard/developers/api-keys/{key.model.id}/roll", {"grace_hours": "24\x00"})
    assert response.status_code == 422
