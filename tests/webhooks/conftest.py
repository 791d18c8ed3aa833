"""A local receiver on 127.0.0.1 that answers as a test scripts it, and settings with
a short client timeout so that slow receivers are quick to test."""
from __future__ import annotations

import pytest

from socialpub.webhooks import service as webhooks
from tests.conftest import test_settings
from tests.webhooks.receiver import Answer, Received, Receiver  # noqa: F401 - imported from here by other tests


@pytest.fixture
def receiver(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    with Receiver() as running:
        yield running


@pytest.fixture
def wh_settings(database_url):
    return test_settings(
        database_url,
        webhook_timeout_seconds=0.5,
        webhook_retry_base_seconds=10.0,
        webhook_retry_max_seconds=3600.0,
        webhook_lease_seconds=30,
    )


@pytest.fixture
def add_endpoint(session, workspace, receiver):
    """Adds an endpoint (to the test receiver by default) whose secret the receiver checks."""

    def add(url: str | None = None, *, livemode: bool = False, event_types=None, workspace_id=None, description=None):
        endpoint, secret = webhooks.create_endpoint(
            session=session, workspace_id=workspace_id or workspace.id, livemode=livemode,
            url=url or receiver.url, description=description, event_types=event_types,
        )
        if url is None:
            receiver.secret = secret
        return endpoint, secret

    return add
