"""What every platform connector offers the publishing pipeline."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class AccountCredentials:
    """What a connector is given for one connected account: its non-secret options
    (instance URL, chat id...) and its decrypted secrets (tokens). Never logged."""

    account_id: str
    platform: str
    handle: str
    options: dict = field(default_factory=dict)
    secrets: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Published:
    """A platform's receipt for a post or a reply."""

    external_id: str
    url: str | None = None
    # Whatever a later reply needs to thread under this one (Bluesky: uri and cid).
    reference: dict = field(default_factory=dict)


class PlatformError(Exception):
    """A platform refused or failed a call.

    transient: worth retrying later (timeouts, 5xx, rate limits), with retry_after
    seconds when the platform says how long. auth_failed: the token is bad, so the
    account needs to be connected again.
    """

    def __init__(self, code: str, message: str, *, transient: bool, retry_after: float | None = None, auth_failed: bool = False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.transient = transient
        self.retry_after = retry_after
        self.auth_failed = auth_failed


class Connector(Protocol):
    name: str
    supports_comments: bool

    def validate(self, options: dict, secrets: dict) -> None:
        """Raise ValueError naming what is missing or malformed, before an account is saved."""

    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published: ...

    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published: ...
