"""Mastodon: statuses through the instance's REST API (POST /api/v1/statuses).

The Idempotency-Key header makes a retried publish return the status the first call
created instead of posting it twice (Mastodon keeps keys for an hour)."""
from __future__ import annotations

import hashlib

from socialpub.connectors import _common as c
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.outbound import Response

PLATFORM = "Mastodon"


def _header_safe(key: str) -> str:
    """The key as a header value: kept when it is short printable ASCII, else its
    SHA-256 (still one fixed value per key, so retries still match)."""
    if 0 < len(key) <= 200 and all(33 <= ord(ch) < 127 for ch in key):
        return key
    return "sha256-" + hashlib.sha256(key.encode("utf-8")).hexdigest()


class MastodonConnector(c.HttpConnector):
    name = "mastodon"
    supports_comments = True

    def validate(self, options: dict, secrets: dict) -> None:
        self.require_objects(options, secrets)
        c.base_url(options.get("instance_url"), "instance URL (instance_url)")
        c.require_text(secrets, "access_token", "access token")

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        return self._post_status(account, {"status": content, "visibility": "public"}, idempotency_key)

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        payload = {"status": content, "visibility": "public", "in_reply_to_id": str(parent.external_id)}
        return self._post_status(account, payload, idempotency_key)

    def _post_status(self, account: AccountCredentials, payload: dict, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        instance = c.base_url(account.options["instance_url"], "instance URL")
        token = account.secrets["access_token"].strip()
        redact = c.redactor_for(account, token)
        url = f"{instance}/api/v1/statuses"
        response = c.send(
            self.client, "POST", url, platform=PLATFORM, redact=redact,
            headers={
                "Authorization": f"Bearer {token}",
                "Idempotency-Key": _header_safe(idempotency_key),
                "Accept": "application/json",
            },
            json=payload,
        )
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact)
        status = c.reply_object(response, PLATFORM, url)
        status_id = status.get("id")
        if not isinstance(status_id, (str, int)) or isinstance(status_id, bool) or str(status_id) == "":
            raise c.malformed(PLATFORM, "a status id", response, url)
        link = status.get("url") or status.get("uri")
        return Published(external_id=str(status_id), url=link if isinstance(link, str) else None)

    @staticmethod
    def _error(response: Response, redact: c.Redactor) -> PlatformError:
        status = response.status_code
        body = c.json_or_none(response)
        message = c.detail(body.get("error") if isinstance(body, dict) else None, redact)
        if status in (401, 403):
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", message))
        if status == 422:
            return c.rejected(PLATFORM, c.with_detail("the status was rejected", message))
        if status == 404:
            message = message or "not found (is this a Mastodon instance?)"
        return c.error_for_status(
            PLATFORM, response, message, platform_wait=c.seconds_until_iso(response.headers.get("X-RateLimit-Reset"))
        )
