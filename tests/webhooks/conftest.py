"""Settings with a short client timeout so that slow receivers are quick to test, and
endpoints pointing at the test's receiver (tests/support/webhook_receiver.py)."""
from __future__ import annotations

import pytest

from socialpub.webhooks import endpoints as webhook_endpoints
from tests.support.settings import test_settings
from tests.support.factories import OPERATOR


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
        endpoint, secret = webhook_endpoints.create_endpoint(
            session=session, actor=OPERATOR, workspace_id=workspace_id or workspace.id, livemode=livemode,
            url=url or receiver.url, description=description, event_types=event_types,
        )
        if url is None:
            receiver.secret = secret
        return endpoint, secret

    return add
