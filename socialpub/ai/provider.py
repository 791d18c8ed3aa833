"""The model behind the assistant, when one is configured: any server that speaks
OpenAI's chat-completions API (OpenAI itself, Ollama, vLLM, llama.cpp's server),
reached through the guarded outbound client like every other request we send.

A model that cannot answer (timeout, connection refused, an error status, an answer
that is not the API's JSON) is "unavailable": the caller answers 503 and keeps
nothing of the exchange.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx

from socialpub.outbound import GuardedClient, OutboundFailed, OutboundRefused

logger = logging.getLogger("socialpub.ai")

DEFAULT_RETRY_AFTER = 5
MAX_RETRY_AFTER = 300
MAX_RESPONSE_BYTES = 4 * 1024 * 1024


class ProviderUnavailable(Exception):
    def __init__(self, reason: str, retry_after: int = DEFAULT_RETRY_AFTER):
        super().__init__(reason)
        self.retry_after = retry_after


def _retry_after(headers) -> int:
    raw = headers.get("retry-after", "") if headers is not None else ""
    try:
        seconds = int(float(raw))
    except ValueError:
        return DEFAULT_RETRY_AFTER
    return max(1, min(seconds, MAX_RETRY_AFTER))


@dataclass
class ChatCompletions:
    base_url: str
    api_key: str | None
    model: str
    timeout_seconds: float
    client: GuardedClient | None = None

    @classmethod
    def from_settings(cls, settings) -> "ChatCompletions | None":
        if not settings.ai_base_url:
            return None
        return cls(
            base_url=settings.ai_base_url, api_key=settings.ai_api_key, model=settings.ai_model,
            timeout_seconds=settings.ai_timeout_seconds,
        )

    def _client(self) -> GuardedClient:
        if self.client is not None:
            return self.client
        return GuardedClient(
            timeout=httpx.Timeout(self.timeout_seconds, connect=min(5.0, self.timeout_seconds)),
            total_timeout=self.timeout_seconds, max_bytes=MAX_RESPONSE_BYTES,
        )

    def complete(self, messages: list[dict]) -> str:
        """The assistant message's text for `messages` (OpenAI's roles and shape)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.base_url.rstrip("/") + "/chat/completions"
        try:
            response = self._client().post(url, headers=headers, json={"model": self.model, "messages": messages})
        except OutboundRefused as exc:
            # The configured URL is not one we may call (a private address not allowed
            # by the operator): a configuration problem, logged for the operator.
            logger.warning("AI provider refused by the outbound guard: %s", exc)
            raise ProviderUnavailable(str(exc)) from None
        except OutboundFailed as exc:
            logger.warning("AI provider unreachable: %s", exc)
            raise ProviderUnavailable(str(exc)) from None
        if response.status_code != 200:
            logger.warning("AI provider answered %s: %s", response.status_code, response.text[:500])
            raise ProviderUnavailable(f"the model answered {response.status_code}", _retry_after(response.headers))
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            logger.warning("AI provider answered something other than a chat completion: %s", response.text[:500])
            raise ProviderUnavailable("the model's answer was not a chat completion") from None
        if not isinstance(content, str) or not content.strip():
            raise ProviderUnavailable("the model's answer was empty")
        # Text a database cannot store (NUL, lone surrogates) never reaches it.
        return content.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
