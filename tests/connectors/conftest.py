import pytest

from socialpub.outbound import Allowlist, GuardedClient
from tests.support.connectors import SHORT_TIMEOUT


@pytest.fixture
def client():
    return GuardedClient(allowlist=Allowlist.parse("127.0.0.1"))


@pytest.fixture
def connector(request, client):
    """The test module's CONNECTOR, with a client that may reach the local fakes."""
    return request.module.CONNECTOR(client)


@pytest.fixture
def impatient_client():
    return GuardedClient(allowlist=Allowlist.parse("127.0.0.1"), timeout=SHORT_TIMEOUT)


@pytest.fixture
def refusing_client():
    """The production default: loopback is not an allowed destination."""
    return GuardedClient(allowlist=Allowlist())


@pytest.fixture
def closed_port():
    """A local port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
