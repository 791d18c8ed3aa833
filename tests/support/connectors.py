"""Assertions the connector tests share."""
import httpx
import pytest

from socialpub.connectors.base import PlatformError

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
