from __future__ import annotations

import re
import uuid

import pytest

from socialpub.members import service as members
from tests.factories import make_workspace

PASSWORD = "correct horse battery staple"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(html: str) -> str:
    match = CSRF_FIELD.search(html)
    assert match, "the page has no CSRF field"
    return match.group(1)


class Browser:
    """A test client that behaves like a person's browser on the dashboard: it reads
    the CSRF token from the page it is on and sends it back with every form."""

    def __init__(self, client):
        self.client = client
        self.page = None

    def get(self, path, **kwargs):
        response = self.client.get(path, **kwargs)
        if "csrf_token" in response.text:
            self.page = response.text
        return response

    def post(self, path, data=None, *, token=True, from_page=None, **kwargs):
        data = dict(data or {})
        if token:
            data.setdefault("csrf_token", csrf_token(self.get(from_page).text if from_page else self.page))
        response = self.client.post(path, data=data, **kwargs)
        if "csrf_token" in response.text:
            self.page = response.text
        return response

    def sign_in(self, email, password=PASSWORD):
        self.get("/dashboard/sign-in")
        return self.post("/dashboard/sign-in", {"email": email, "password": password}, follow_redirects=False)


@pytest.fixture
def browser_for(app):
    """A fresh browser per call, each from its own client address (the sign-in
    limiter counts per address)."""
    clients = []

    def make():
        client = app.test_client(client=(f"10.{len(clients)}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}", 50000))
        client.__enter__()
        clients.append(client)
        return Browser(client)

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def make_member(session, workspace, email=None):
    email = email or f"dev-{uuid.uuid4().hex[:10]}@example.com"
    return members.create_member(session=session, workspace_id=workspace.id, email=email, password=PASSWORD)


@pytest.fixture
def member(session, workspace):
    return make_member(session, workspace)


@pytest.fixture
def signed_in(browser_for, member):
    browser = browser_for()
    response = browser.sign_in(member.email)
    assert response.status_code == 302, response.text
    return browser


@pytest.fixture
def other_workspace(session):
    return make_workspace(session, name="Other Co")
