"""What the connector tests share: assertions on their errors (of a publish or a comment
that must fail), and a client that records where a connector sends its requests without
sending them anywhere."""
import httpx
import pytest

from socialpub.connectors.base import PlatformError
from socialpub.outbound import GuardedClient, OutboundFailed

# The impatient client's timeout: short, so the timeout tests stay quick.
SHORT_TIMEOUT = httpx.Timeout(0.5)
# How long a late fake waits before answering: well past SHORT_TIMEOUT.
LATE = 1.0


def platform_error(call, code: str, *, transient: bool, auth_failed: bool = False,
                   says: str | None = None) -> PlatformError:
    """Runs call, which must raise PlatformError with these properties (and a message
    containing `says`, when given); returns it."""
    with pytest.raises(PlatformError) as caught:
        call()
    error = caught.value
    assert type(error) is PlatformError
    assert (error.code, error.transient, error.auth_failed) == (code, transient, auth_failed), error.message
    assert error.message == str(error) and error.message
    if says is not None:
        assert says in error.message
    return error


def publish_error(connector, account, code: str, *, transient: bool, auth_failed: bool = False, says: str | None = None,
                  content: str = "hi", idempotency_key: str = "k") -> PlatformError:
    """Publishes content, which must fail as platform_error() describes; returns the error."""
    return platform_error(lambda: connector.publish(account, content, idempotency_key=idempotency_key),
                          code, transient=transient, auth_failed=auth_failed, says=says)


def auth_failure(connector, account, *, says: str | None = None) -> PlatformError:
    """Publishing must fail as an auth failure: permanent, and the account must be
    reconnected. Returns the error."""
    return publish_error(connector, account, "platform_auth_failed", transient=False, auth_failed=True, says=says)


def comment_error(connector, account, parent, code: str, *, transient: bool, says: str | None = None,
                  content: str = "Hi") -> PlatformError:
    """Comments under parent, which must fail as platform_error() describes; returns the error."""
    return platform_error(lambda: connector.comment(account, parent=parent, content=content, idempotency_key="c"),
                          code, transient=transient, says=says)


def publish_late_then_retry(connector_class, impatient_client, client, account):
    """Publishes through a client that gives up before the (late) fake answers, a transient
    network error, then again with the same idempotency key through one that waits; returns
    what the retry published."""
    publish_error(connector_class(impatient_client), account, "network_error", transient=True,
                  content="Slow", idempotency_key="slow-1")
    return connector_class(client).publish(account, "Slow", idempotency_key="slow-1")


def assert_no_secret(error: PlatformError, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in error.message
        assert secret not in str(error)
        assert secret not in repr(error)


def assert_unknown_credential(connector, account, secret: str, *, says: str) -> None:
    """Publishing with a credential the platform does not know is an auth failure that
    says so and never shows the credential."""
    assert_no_secret(auth_failure(connector, account, says=says), secret)


def assert_rejected_unposted(connector, account, server, content: str, *, says: str) -> None:
    """Publishing content is refused for good, saying why, and the fake holds no post."""
    publish_error(connector, account, "platform_rejected", transient=False, says=says, content=content)
    assert server.posts == []


class RecordingClient(GuardedClient):
    """Records each request's method and URL and fails it as an unreachable network
    would: for checking where a connector goes, with nothing leaving the machine."""

    def __init__(self):
        super().__init__()
        self.sent: list[tuple[str, str]] = []

    def request(self, method: str, url: str, **kwargs):
        self.sent.append((method, url))
        raise OutboundFailed(f"{url} is not reached from the tests")
