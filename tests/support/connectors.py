"""What the connector tests share: assertions on their errors, and a client that
records where a connector sends its requests without sending them anywhere."""
import httpx
import pytest

from socialpub.connectors.base import PlatformError
from socialpub.outbound import GuardedClient, OutboundFailed

# The impatient client's timeout: short, so the timeout tests stay quick.
SHORT_TIMEOUT = httpx.Timeout(0.5)
# How long a late fake waits before answering: well past SHORT_TIMEOUT.
LATE = 1.0


def platform_error(call, code: str, *, transient: bool, auth_failed: bool = False) -> PlatformError:
    """Runs call, which must raise PlatformError with these properties; returns it."""
    with pytest.raises(PlatformError) as caught:
        call()
    error = caught.value
    assert type(error) is PlatformError
    assert (error.code, error.transient, error.auth_failed) == (code, transient, auth_failed), error.message
    assert error.message == str(error) and error.message
    return error


def assert_no_secret(error: PlatformError, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in error.message
        assert secret not in str(error)
        assert secret not in repr(error)


class RecordingClient(GuardedClient):
    """Records each request's method and URL and fails it as an unreachable network
    would: for checking where a connector goes, with nothing leaving the machine."""

    def __init__(self):
        super().__init__()
        self.sent: list[tuple[str, str]] = []

    def request(self, method: str, url: str, **kwargs):
        self.sent.append((method, url))
        raise OutboundFailed(f"{url} is not reached from the tests")
