from __future__ import annotations

import uuid

import pytest

from tests.support.browser import served, server  # noqa: F401 (fixtures: one of each a run)
from tests.support.dashboard import Browser, make_member
from tests.support.factories import make_workspace


@pytest.fixture
def browser_for(app):
    """A fresh browser per call, each from its own client address (the sign-in
    limiter counts per address) unless one is given."""
    clients = []

    def make(address: str | None = None):
        address = address or f"10.{len(clients)}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
        client = app.test_client(client=(address, 50000))
        client.__enter__()
        clients.append(client)
        return Browser(client)

    yield make
    for client in clients:
        client.__exit__(None, None, None)


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
