"""Discord: messages through a channel webhook (Execute Webhook, with wait=true so the
answer is the created message).

The webhook URL is the credential (its last segment is the token), so it is kept out
of every message this connector raises. Webhook messages have no idempotency key: a
send whose answer is lost (a timeout) may have been delivered, and a retry sends it
again. Webhooks cannot reply to a message, so comments are not supported."""
from __future__ import annotations

import re

import httpx

from socialpub.connectors import _common as c
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.outbound import Response

PLATFORM = "Discord"
_WEBHOOK_PATH = re.compile(r"^/api(?:/v\d+)?/webhooks/(\d+)/([A-Za-z0-9_-]+)/?$")
_SNOWFLAKE = re.compile(r"^\d{1,20}$")


def _webhook(value) -> tuple[httpx.URL, str]:
    """The webhook URL and its token. Messages never quote the URL: it is a secret."""
    url = c.http_url(value, "webhook URL (webhook_url)")
    match = _WEBHOOK_PATH.match(url.path)
    if match is None:
        raise ValueError("webhook URL (webhook_url) must be a Discord webhook URL (…/api/webhooks/<id>/<token>)")
    if url.fragment:
        raise ValueError("webhook URL (webhook_url) must not have a fragment")
    return url, match.group(2)


def _snowflake(value) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return value if isinstance(value, str) and _SNOWFLAKE.match(value) else None


class DiscordConnector(c.HttpConnector):
    name = "discord"
    reports_metrics = False
    supports_comments = False

    def validate(self, options: dict, secrets: dict) -> None:
        self.require_objects(options, secrets)
        _webhook(secrets.get("webhook_url"))
        guild_id = options.get("guild_id")
        if guild_id not in (None, "") and _snowflake(guild_id) is None:
            raise ValueError("server id (guild_id) must be a Discord id (digits)")

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        webhook, token = _webhook(account.secrets["webhook_url"])
        redact = c.redactor_for(account, str(webhook), token)
        url = str(webhook.copy_merge_params({"wait": "true"}))
        response = c.send(
            self.client, "POST", url, platform=PLATFORM, redact=redact,
            headers={"Accept": "application/json"},
            # No @everyone, role or user pings from published text.
            json={"content": content, "allowed_mentions": {"parse": []}},
        )
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact)
        message = c.reply_object(response, PLATFORM, url)
        message_id = _snowflake(message.get("id"))
        if message_id is None:
            raise c.malformed(PLATFORM, "a message id", response, url)
        channel_id = _snowflake(message.get("channel_id"))
        guild_id = _snowflake(message.get("guild_id")) or _snowflake(account.options.get("guild_id"))
        link = f"https://discord.com/channels/{guild_id}/{channel_id}/{message_id}" if guild_id and channel_id else None
        return Published(external_id=message_id, url=link, reference={"channel_id": channel_id} if channel_id else {})

    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        raise PlatformError(c.COMMENTS_UNSUPPORTED, "Discord webhooks cannot reply to a message", transient=False)

    # Discord webhooks report no reactions or member counts to the webhook that posted:
    # analytics does not track these accounts.
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> None:
        return None

    def fetch_account_metrics(self, account: AccountCredentials) -> None:
        return None

    @staticmethod
    def _error(response: Response, redact: c.Redactor) -> PlatformError:
        status = response.status_code
        body = c.json_or_none(response)
        body = body if isinstance(body, dict) else {}
        message = c.detail(body.get("message"), redact)
        field_errors = _field_errors(body.get("errors"), redact)
        text = "; ".join(part for part in (message, field_errors) if part)
        if status in (401, 404):
            return c.auth_failed(PLATFORM, c.with_detail("the webhook is gone or its token was refused", text))
        return c.error_for_status(
            PLATFORM, response, text, refused="the message", platform_wait=c.non_negative_number(body.get("retry_after"))
        )


def _field_errors(errors, redact: c.Redactor) -> str:
    """Discord's nested {"field": {"_errors": [{"code", "message"}]}} as "field: message"."""
    found: list[str] = []

    def walk(node, path):
        if not isinstance(node, dict) or len(found) >= 5:
            return
        for key, value in node.items():
            if key == "_errors" and isinstance(value, list):
                for item in value:
                    if isinstance(item, dict) and item.get("message"):
                        found.append(f"{'.'.join(path) or 'body'}: {item['message']}")
            else:
                walk(value, [*path, str(key)])

    walk(errors, [])
    return c.detail("; ".join(found[:5]), redact)
