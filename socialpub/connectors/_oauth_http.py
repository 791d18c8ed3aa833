"""What the connectors of the OAuth platforms share (cross-cutting, beside `_common`:
X, LinkedIn, Facebook, Threads, Instagram, TikTok, YouTube and Pinterest): settings of
an API URL (`api_url`) and an access token (`access_token`), calls made with that
token as a Bearer header and kept out of every message, the refusals of a platform
that takes no text-only post, and the insights of Meta's Graph APIs (Threads,
Instagram).

Each connector keeps what is its own: its OAuthSpec (whose `label` names the platform
in messages), its endpoints and body shapes, and what its error answers mean
(`_error`, and `_error_in` for an error a success answer carries)."""
from __future__ import annotations

from socialpub.connectors import _common as c
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.connectors.oauth import OAuthSpec
from socialpub.outbound import Response


class OAuthHttpConnector(c.HttpConnector):
    """An HTTP connector whose accounts connect through OAuth 2."""

    oauth: OAuthSpec
    # What validate() calls the access token when it is missing.
    token_label = "access token"

    @property
    def label(self) -> str:
        """The platform's name in messages."""
        return self.oauth.label

    def validate(self, options: dict, secrets: dict) -> None:
        self.require_objects(options, secrets)
        c.base_url(options.get("api_url"), "API URL (api_url)")
        self.validate_options(options)
        c.require_text(secrets, "access_token", self.token_label)

    def validate_options(self, options: dict) -> None:
        """The platform's own options, checked after the API URL (none by default)."""

    # -- the calls ----------------------------------------------------------------------

    def call(self, method: str, api_url: str, path: str, token: str, *, account: AccountCredentials | None = None,
             json=None, headers: dict | None = None) -> tuple[Response, c.Redactor, str]:
        """One call to `api_url` + `path` with the token as a Bearer header (never in the
        URL), whatever its status: the answer, the redactor of the token (and of the
        account's secrets) and the URL sent to."""
        base = c.base_url(api_url, "API URL")
        token = token.strip()
        redact = c.redactor_for(account, token) if account is not None else c.Redactor(token)
        url = f"{base}{path}"
        sent = {"Authorization": f"Bearer {token}", "Accept": "application/json", **(headers or {})}
        response = c.send(self.client, method, url, platform=self.label, redact=redact, headers=sent, json=json)
        return response, redact, url

    def request(self, method: str, api_url: str, path: str, token: str, *, account: AccountCredentials | None = None,
                json=None, what: str = "the read") -> dict:
        """A call whose success answers a JSON object: an error answer, or an error in a
        success answer's body, is raised as the connector maps it; `what` names the call
        in its refusals."""
        response, redact, url = self.call(method, api_url, path, token, account=account, json=json)
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact, what)
        body = c.reply_object(response, self.label, url)
        error = self._error_in(body, response, redact, what)
        if error is not None:
            raise error
        return body

    def _error(self, response: Response, redact: c.Redactor, what: str) -> PlatformError:
        """What an error answer means: the platform's own mapping."""
        raise NotImplementedError

    def _error_in(self, body: dict, response: Response, redact: c.Redactor, what: str) -> PlatformError | None:
        """An error a success answer carries in its body (none by default)."""
        return None


def insight_values(body: dict, platform: str, what: str) -> dict:
    """Each metric's value in a Graph insights answer (`{"data": [{"name", ...}]}`): a
    user metric's `total_value.value`, else a lifetime metric's last `values[].value`,
    as sent (the caller counts them)."""
    data = body.get("data")
    if not isinstance(data, list):
        raise c.malformed(platform, what)
    found = {}
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        total = entry.get("total_value")
        values = entry.get("values")
        if isinstance(total, dict) and "value" in total:
            found[entry["name"]] = total["value"]
        elif isinstance(values, list) and values and isinstance(values[-1], dict):
            found[entry["name"]] = values[-1].get("value")
    return found


class MediaOnly:
    """Mixed into the OAuthHttpConnector of a platform that takes no text-only post (a
    post is media, which this API does not attach): `publish` and `comment` refuse for
    good, and accounts are connected for their metrics."""

    publishes_text = False

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        raise self._no_text_posts()

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        raise self._no_text_posts()

    def _no_text_posts(self) -> PlatformError:
        return c.rejected(self.label, f"{self.label} takes no text-only post; media is attached in the application")
