"""Mastodon: statuses through the instance's REST API (POST /api/v1/statuses).

The Idempotency-Key header makes a retried publish return the status the first call
created instead of posting it twice (Mastodon keeps keys for an hour)."""
from __future__ import annotations

import datetime as dt
import hashlib
import html
import re
from urllib.parse import quote

from socialpub.connectors import _common as c
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    PlatformError,
    PostMetricsReading,
    Published,
)
from socialpub.outbound import Response
from socialpub.connectors.base import IncomingMessage, NotificationsPage, mention

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
    reports_metrics = True

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

    @c.platform_errors_only
    def send_dm(self, account: AccountCredentials, *, to_handle: str, text: str, idempotency_key: str) -> Published:
        """A direct message: a status of visibility `direct` that mentions the handle
        (`@user@instance`), which only the people it mentions see."""
        payload = {"status": f"{mention(to_handle)} {text}", "visibility": "direct"}
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

    # Mastodon reports favourites, boosts and replies, and no impressions.
    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        status = self._get(account, f"/api/v1/statuses/{quote(str(external_id), safe='')}", "the status")
        return PostMetricsReading(
            likes=c.count(status, "favourites_count"),
            comments=c.count(status, "replies_count"),
            shares=c.count(status, "reblogs_count"),
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        profile = self._get(account, "/api/v1/accounts/verify_credentials", "the account")
        return AccountMetricsReading(followers=c.count(profile, "followers_count"))

    def _read(self, account: AccountCredentials, path: str) -> tuple[Response, str]:
        """A successful GET of `path` on the account's instance, and its URL."""
        c.checked_account(self, account)
        instance = c.base_url(account.options["instance_url"], "instance URL")
        token = account.secrets["access_token"].strip()
        redact = c.redactor_for(account, token)
        url = f"{instance}{path}"
        response = c.send(
            self.client, "GET", url, platform=PLATFORM, redact=redact,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact)
        return response, url

    def _get(self, account: AccountCredentials, path: str, what: str) -> dict:
        response, url = self._read(account, path)
        body = c.reply_object(response, PLATFORM, url)
        if not body:
            raise c.malformed(PLATFORM, what, response, url)
        return body

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

    # --- notifications (auto-reply) --------------------------------------------------
    # Mentions only (GET /api/v1/notifications?types[]=mention): on Mastodon a reply to
    # one of our statuses mentions us too. `min_id` reads the page right after the
    # cursor, so a burst larger than a page is read over the next polls, never skipped.

    NOTIFICATIONS_PAGE = 40

    @c.platform_errors_only
    def fetch_notifications(self, account: AccountCredentials, *, cursor: str | None) -> NotificationsPage:
        own_id = str(self._get(account, "/api/v1/accounts/verify_credentials", "the account").get("id") or "")
        query = f"types[]=mention&limit={self.NOTIFICATIONS_PAGE}"
        if cursor:
            query += f"&min_id={quote(cursor, safe='')}"
        response, url = self._read(account, f"/api/v1/notifications?{query}")
        body = c.json_or_none(response)
        if not isinstance(body, list):
            raise c.malformed(PLATFORM, "a list of notifications", response, url)
        messages, newest = [], cursor
        for notification in body:
            if not isinstance(notification, dict):
                continue
            notification_id = str(notification.get("id") or "")
            if notification_id and (newest is None or self._id_order(notification_id) > self._id_order(newest)):
                newest = notification_id
            message = self._incoming(notification, own_id)
            if message is not None:
                messages.append((self._id_order(notification_id), message))
        messages.sort(key=lambda pair: pair[0])
        return NotificationsPage(messages=[message for _, message in messages], cursor=newest)

    @c.platform_errors_only
    def reply(self, account: AccountCredentials, *, message: IncomingMessage, content: str,
              idempotency_key: str) -> Published:
        # The reply keeps the message's audience: a direct message is answered directly.
        visibility = message.parent.reference.get("visibility") or "public"
        payload = {"status": f"{message.mention}{content}", "visibility": visibility,
                   "in_reply_to_id": str(message.parent.external_id)}
        return self._post_status(account, payload, idempotency_key)

    @staticmethod
    def _id_order(value: str) -> tuple[int, str]:
        # Mastodon ids are decimal snowflakes as strings: longer is newer.
        return len(value), value

    @classmethod
    def _incoming(cls, notification: dict, own_id: str) -> IncomingMessage | None:
        status, author = notification.get("status"), notification.get("account")
        if notification.get("type") != "mention" or not isinstance(status, dict) or not isinstance(author, dict):
            return None
        status_id, author_id = str(status.get("id") or ""), str(author.get("id") or "")
        if not status_id or not author_id:
            return None
        visibility = status.get("visibility") if isinstance(status.get("visibility"), str) else "public"
        if visibility == "direct":
            kind = "dm"
        elif own_id and str(status.get("in_reply_to_account_id") or "") == own_id:
            kind = "comment"
        else:
            kind = "mention"
        acct = str(author.get("acct") or author.get("username") or author_id)
        return IncomingMessage(
            external_id=status_id, message_type=kind, text=cls._plain_text(status.get("content")),
            author=f"@{acct}", author_id=author_id, from_self=bool(own_id) and author_id == own_id,
            received_at=cls._when(status.get("created_at")),
            parent=Published(external_id=status_id, url=status.get("url") if isinstance(status.get("url"), str) else None,
                             reference={"visibility": visibility}),
            mention=f"@{acct} ",
        )

    @staticmethod
    def _when(value) -> dt.datetime | None:
        if not isinstance(value, str):
            return None
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)

    @staticmethod
    def _plain_text(content) -> str:
        """A status's HTML as the text a reader sees: paragraphs and line breaks kept,
        tags dropped, entities decoded."""
        if not isinstance(content, str):
            return ""
        text = re.sub(r"(?i)<br\s*/?>", "\n", content)
        text = re.sub(r"(?i)</p>\s*<p[^>]*>", "\n\n", text)
        text = re.sub(r"<[^>]+>", "", text)
        return html.unescape(text).strip()
