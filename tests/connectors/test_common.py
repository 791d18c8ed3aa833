"""The connectors' shared outbound call: every failure of the guarded client, even an
unforeseen one, becomes a PlatformError; URL settings with an unusable host are refused."""
import pytest

from socialpub.connectors import _common as c
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.outbound import Allowlist, GuardedClient
from tests.support.connectors import assert_no_secret, platform_error

SECRET = "tok_live_abcdef123456"


class ExplodingClient:
    """A client whose request fails in a way no connector foresaw."""

    def __init__(self, error: Exception):
        self.error = error

    def request(self, *args, **kwargs):
        raise self.error


def send(client, url="https://mastodon.example/api/v1/statuses"):
    return c.send(client, "POST", url, platform="mastodon", redact=c.Redactor(SECRET),
                  headers={"Authorization": f"Bearer {SECRET}"}, json={})


@pytest.mark.parametrize("error", [UnicodeError("label empty or too long"), RuntimeError(f"boom {SECRET}"), KeyError("x")])
def test_an_unforeseen_client_failure_is_a_transient_platform_error_without_its_text(error):
    refused = platform_error(lambda: send(ExplodingClient(error)), c.PLATFORM_ERROR, transient=True)
    assert error.__class__.__name__ in refused.message
    assert_no_secret(refused, SECRET)


@pytest.mark.parametrize("url", ["https://a..b.example/api", "https://" + "a" * 64 + ".example/api"])
def test_an_unusable_host_is_a_permanent_refusal(url):
    refused = platform_error(lambda: send(GuardedClient(allowlist=Allowlist()), url), c.DESTINATION_REFUSED, transient=False)
    assert "not a usable host name" in refused.message


@pytest.mark.parametrize(
    "url, says",
    [
        ("https://mastodon..social", "empty label"),
        ("https://" + "m" * 64 + ".social", "longer than 63"),
        ("https://.mastodon.social", "empty label"),
    ],
)
def test_url_settings_with_an_unusable_host_are_refused(url, says):
    with pytest.raises(ValueError, match=says):
        MastodonConnector().validate({"instance_url": url}, {"access_token": "abc"})
