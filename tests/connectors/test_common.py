"""The connectors' shared outbound call: every failure of the guarded client, even an
unforeseen one, becomes a PlatformError; URL settings with an unusable host are refused.
Counts read from a platform's answer; the OAuth platforms' calls with a Bearer token, the
refusals of a platform that takes no text-only post, and Graph insights."""
import json as jsonlib

import httpx
import pytest

from socialpub.connectors import _common as c
from socialpub.connectors._oauth_http import MediaOnly, OAuthHttpConnector, insight_values
from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.oauth import OAuthSpec
from socialpub.outbound import Allowlist, GuardedClient, Response
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


# --- count ------------------------------------------------------------------------


@pytest.mark.parametrize("value, whole, fractions, digits", [
    (12, 12, 12, 12),
    (0, 0, 0, 0),
    (-3, 0, 0, 0),
    (True, 0, 0, 0),
    (None, 0, 0, 0),
    (12.9, 0, 12, 0),
    (-1.5, 0, 0, 0),
    (float("nan"), 0, 0, 0),
    (float("inf"), 0, 0, 0),
    ("42", 0, 0, 42),
    (" 42 ", 0, 0, 42),
    ("-42", 0, 0, 0),
    ("4.2", 0, 0, 0),
    ([1], 0, 0, 0),
])
def test_a_count_is_a_whole_non_negative_number_else_0(value, whole, fractions, digits):
    assert c.count({"n": value}, "n") == whole
    assert c.count({"n": value}, "n", fractions=True) == fractions
    assert c.count({"n": value}, "n", digits=True) == digits


@pytest.mark.parametrize("mapping", [{}, None, [], "12", {"other": 5}])
def test_an_absent_count_or_a_mapping_that_is_not_an_object_counts_0(mapping):
    assert c.count(mapping, "n", fractions=True, digits=True) == 0


# --- the OAuth platforms' calls ------------------------------------------------------

API = "https://api.example.com/v1"


class AnsweringClient:
    """Answers every request with one status and JSON body, and keeps what was sent."""

    def __init__(self, status: int, body, headers: dict | None = None):
        self.status, self.body, self.headers = status, body, headers or {}
        self.sent: list[tuple[str, str, dict, object]] = []

    def request(self, method, url, *, headers=None, json=None):
        self.sent.append((method, url, headers, json))
        return Response(self.status, httpx.Headers(self.headers), jsonlib.dumps(self.body).encode(), url)


class Example(OAuthHttpConnector):
    """An OAuth platform whose errors say `{"error": "..."}`, in error answers and in successes."""

    name = "example"
    oauth = OAuthSpec(platform="example", label="Example", scopes=("read",))

    def validate_options(self, options: dict) -> None:
        c.require_text(options, "user_id", "user id")

    @staticmethod
    def _error(response, redact, what):
        return c.error_for_status("Example", response, c.detail(c.json_or_none(response).get("error"), redact),
                                  refused=what)

    @staticmethod
    def _error_in(body, response, redact, what):
        return c.rejected("Example", f"{what} was refused: {redact(body['error'])}") if "error" in body else None


class MediaExample(MediaOnly, Example):
    pass


def account(**secrets) -> AccountCredentials:
    return AccountCredentials(account_id="a1", platform="example", handle="@me",
                              options={"api_url": API, "user_id": "7"}, secrets={"access_token": SECRET, **secrets})


def test_an_oauth_platforms_settings_are_its_api_url_its_own_options_then_its_access_token():
    Example().validate({"api_url": API, "user_id": "7"}, {"access_token": SECRET})
    for options, secrets, says in [
        ({"user_id": "7"}, {}, "API URL"),
        ({"api_url": API}, {}, "user id"),
        ({"api_url": API, "user_id": "7"}, {}, "access token"),
        ({"api_url": "ftp://api.example.com", "user_id": "7"}, {"access_token": SECRET}, "http or https"),
    ]:
        with pytest.raises(ValueError, match=says):
            Example().validate(options, secrets)


def test_a_call_sends_the_token_as_a_bearer_header_and_never_in_the_url():
    client = AnsweringClient(200, {"id": "1"})
    response, redact, url = Example(client).call("POST", API + "/", "/posts?x=1", f" {SECRET} ", json={"a": 1},
                                                 headers={"X-Version": "2"})
    assert (response.status_code, url) == (200, f"{API}/posts?x=1")
    assert client.sent == [("POST", f"{API}/posts?x=1", {"Authorization": f"Bearer {SECRET}",
                                                        "Accept": "application/json", "X-Version": "2"}, {"a": 1})]
    assert redact(f"a {SECRET} b") == "a [redacted] b"


def test_a_call_for_an_account_redacts_all_its_secrets():
    _, redact, _ = Example(AnsweringClient(200, {})).call("GET", API, "/me", SECRET,
                                                         account=account(refresh_token="refresh_abcdef"))
    assert redact("refresh_abcdef and " + SECRET) == "[redacted] and [redacted]"


def test_a_request_answers_the_success_object():
    assert Example(AnsweringClient(200, {"id": "1"})).request("GET", API, "/me", SECRET) == {"id": "1"}


def test_an_error_answer_is_mapped_by_the_connector_naming_the_call_without_the_token():
    refused = platform_error(lambda: Example(AnsweringClient(400, {"error": f"bad {SECRET}"})).request(
        "POST", API, "/posts", SECRET, what="the post"), c.REJECTED, transient=False, says="the post was refused (400)")
    assert_no_secret(refused, SECRET)
    platform_error(lambda: Example(AnsweringClient(503, {"error": "down"})).request("GET", API, "/me", SECRET),
                   c.UNAVAILABLE, transient=True, says="Example answered 503")
    platform_error(lambda: Example(AnsweringClient(400, {"error": "no"})).request("GET", API, "/me", SECRET),
                   c.REJECTED, transient=False, says="the read was refused")


def test_an_error_in_a_success_answer_is_raised_as_the_connector_reads_it():
    refused = platform_error(lambda: Example(AnsweringClient(200, {"error": f"gone {SECRET}"})).request(
        "GET", API, "/me", SECRET, what="the user"), c.REJECTED, transient=False, says="the user was refused: gone")
    assert_no_secret(refused, SECRET)


def test_a_success_without_a_json_object_is_malformed():
    platform_error(lambda: Example(AnsweringClient(200, [1, 2])).request("GET", API, "/me", SECRET),
                   c.PLATFORM_ERROR, transient=True, says="Example answered without the expected JSON")


def test_a_media_only_platform_refuses_text_posts_and_comments_for_good_naming_itself():
    connector = MediaExample(AnsweringClient(200, {}))
    assert connector.publishes_text is False
    for call in (lambda: connector.publish(account(), "hi", idempotency_key="k"),
                 lambda: connector.comment(account(), parent=Published("1"), content="hi", idempotency_key="c")):
        refused = platform_error(call, c.REJECTED, transient=False)
        assert refused.message == "Example: Example takes no text-only post; media is attached in the application"
    assert connector.client.sent == []


def test_graph_insights_are_read_as_sent_from_a_total_or_the_last_value():
    body = {"data": [
        {"name": "followers_count", "total_value": {"value": 12}},
        {"name": "views", "period": "lifetime", "values": [{"value": 3}, {"value": 5.0}]},
        {"name": "likes", "values": []},
        {"name": 7, "total_value": {"value": 1}},
        "not a metric",
    ]}
    assert insight_values(body, "Example", "the insights") == {"followers_count": 12, "views": 5.0}
    platform_error(lambda: insight_values({"data": {}}, "Example", "the post's insights"), c.PLATFORM_ERROR,
                   transient=True, says="Example answered without the post's insights")
