"""Telegram: messages sent by the account's bot through the Bot API (sendMessage).

The bot token is part of every request path, so every message this connector raises
is scrubbed of it. The Bot API has no idempotency key: a send whose answer is lost
(a timeout) may have been delivered, and a retry sends it again."""
from __future__ import annotations

import re

from socialpub.connectors import _common as c
from socialpub.connectors.base import AccountCredentials, PlatformError, Published
from socialpub.outbound import Response

PLATFORM = "Telegram"
DEFAULT_API_URL = "https://api.telegram.org"
_TOKEN = re.compile(r"^\d{1,20}:[A-Za-z0-9_-]{20,}$")
_NUMERIC_CHAT = re.compile(r"^-?\d{1,20}$")
_CHAT_USERNAME = re.compile(r"^@[A-Za-z][A-Za-z0-9_]{3,31}$")


def _chat_id(value):
    """The chat as the Bot API takes it: an integer id or "@channelusername"."""
    if isinstance(value, bool):
        raise ValueError("chat id (chat_id) must be a number or an @username")
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value.strip():
        raise ValueError("chat id (chat_id) is required")
    value = value.strip()
    if _NUMERIC_CHAT.match(value):
        return int(value)
    if _CHAT_USERNAME.match(value):
        return value
    raise ValueError("chat id (chat_id) must be a number (e.g. -1001234567890) or a channel @username")


class TelegramConnector(c.HttpConnector):
    name = "telegram"
    reports_metrics = False
    supports_comments = True

    def validate(self, options: dict, secrets: dict) -> None:
        self.require_objects(options, secrets)
        c.base_url(options.get("api_url", DEFAULT_API_URL), "Bot API URL (api_url)")
        _chat_id(options.get("chat_id"))
        token = c.require_text(secrets, "bot_token", "bot token")
        if not _TOKEN.match(token):
            raise ValueError("bot token (bot_token) is not in the form BotFather gives (123456789:ABC...)")

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        return self._send(account, {"text": content})

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        _, _, message_id = str(parent.external_id).rpartition(":")
        if not message_id.isdigit():
            raise c.rejected(PLATFORM, "the message to reply to has no message id")
        return self._send(account, {"text": content, "reply_parameters": {"message_id": int(message_id)}})

    def _send(self, account: AccountCredentials, payload: dict) -> Published:
        c.checked_account(self, account)
        api_url = c.base_url(account.options.get("api_url", DEFAULT_API_URL), "Bot API URL")
        chat_id = _chat_id(account.options.get("chat_id"))
        token = account.secrets["bot_token"].strip()
        redact = c.redactor_for(account, token)
        url = f"{api_url}/bot{token}/sendMessage"
        response = c.send(
            self.client, "POST", url, platform=PLATFORM, redact=redact,
            headers={"Accept": "application/json"}, json={"chat_id": chat_id, **payload},
        )
        body = c.json_or_none(response)
        if not 200 <= response.status_code < 300 or (isinstance(body, dict) and body.get("ok") is False):
            raise self._error(response, body, redact)
        body = c.reply_object(response, PLATFORM, url)
        result = body.get("result")
        if body.get("ok") is not True or not isinstance(result, dict):
            raise c.malformed(PLATFORM, "a sent message", response, url)
        message_id = result.get("message_id")
        if isinstance(message_id, bool) or not isinstance(message_id, int):
            raise c.malformed(PLATFORM, "a message id", response, url)
        chat = result.get("chat") if isinstance(result.get("chat"), dict) else {}
        chat_key = chat.get("id", chat_id)
        username = chat.get("username")
        link = f"https://t.me/{username}/{message_id}" if isinstance(username, str) and username else None
        return Published(external_id=f"{chat_key}:{message_id}", url=link)

    # The Bot API reports no views or reactions of a channel post to the bot that sent it:
    # analytics does not track these accounts.
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> None:
        return None

    def fetch_account_metrics(self, account: AccountCredentials) -> None:
        return None

    @staticmethod
    def _error(response: Response, body, redact: c.Redactor) -> PlatformError:
        body = body if isinstance(body, dict) else {}
        code = body.get("error_code")
        status = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else response.status_code
        description = c.detail(body.get("description"), redact)
        parameters = body.get("parameters") if isinstance(body.get("parameters"), dict) else {}
        if status in (401, 404):
            return c.auth_failed(PLATFORM, c.with_detail("the bot token was refused", description))
        if status == 403:
            return c.auth_failed(PLATFORM, c.with_detail("the bot may not post to this chat", description))
        refusal = description
        migrated = parameters.get("migrate_to_chat_id")
        if isinstance(migrated, int) and not isinstance(migrated, bool):
            note = f"the group is now the supergroup {migrated}; update the chat id"
            refusal = f"{description}; {note}" if description else note
        return c.error_for_status(
            PLATFORM, response, description, status=status, refused="the message", refusal_detail=refusal,
            platform_wait=c.non_negative_number(parameters.get("retry_after")),
        )
