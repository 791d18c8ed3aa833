"""What every platform connector offers the publishing pipeline."""
from __future__ import annotations

import datetime as dt
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


@dataclass(frozen=True)
class PostMetricsReading:
    """A post's lifetime counts as the platform reports them now. None: the platform
    does not report that count (Mastodon and Bluesky report no impressions, reach or
    clicks)."""

    likes: int
    comments: int
    shares: int
    impressions: int | None = None
    reach: int | None = None
    clicks: int | None = None


@dataclass(frozen=True)
class AccountMetricsReading:
    """An account's audience as the platform reports it now."""

    followers: int


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

    # Whether the platform reports metrics at all: analytics tracks only accounts
    # whose connector does.
    reports_metrics: bool

    def fetch_post_metrics(
        self, account: AccountCredentials, external_id: str, *, published_at=None
    ) -> PostMetricsReading | None:
        """The post's counts now; None where the platform reports none. `published_at`
        (aware UTC) is when the post went out, for platforms that need it."""

    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading | None:
        """The account's followers now; None where the platform reports none."""


@dataclass(frozen=True)
class IncomingMessage:
    """A comment, mention or direct message an account received, as its notifications
    poll read it: enough to decide on it and to reply under it."""

    # The platform's id of the message itself (a Mastodon status id, a Bluesky at:// URI).
    external_id: str
    message_type: str  # comment (a reply to one of our posts) | mention | dm
    text: str
    author: str  # the author's handle
    author_id: str  # the platform's stable id of the author
    # Written by the polled account itself: never answered, so replies cannot loop.
    from_self: bool
    received_at: dt.datetime | None
    # What a reply threads under, as `comment` takes it.
    parent: Published
    # Put before a reply so the author is notified where a reply alone does not (Mastodon).
    mention: str = ""


@dataclass(frozen=True)
class NotificationsPage:
    """New messages since a cursor, oldest first, and the cursor to poll from next
    (None: keep the one given)."""

    messages: list[IncomingMessage]
    cursor: str | None


class NotificationsConnector(Protocol):
    """A connector that can read an account's incoming comments and mentions and
    answer them (Mastodon, Bluesky, the sandbox); auto-reply polls through it."""

    def fetch_notifications(self, account: AccountCredentials, *, cursor: str | None) -> NotificationsPage:
        """The messages after `cursor`; without one, the latest (the backlog a first
        poll only records)."""

    def reply(self, account: AccountCredentials, *, message: IncomingMessage, content: str,
              idempotency_key: str) -> Published:
        """Answers `message` from the account, once per idempotency key."""


class DirectMessagesConnector(Protocol):
    """A connector that can send a direct (private) message from an account to a
    handle on its platform (the sandbox, Mastodon); influencer outreach sends through
    it. A connector without `send_dm` cannot, and its platform is refused for direct
    messages."""

    def send_dm(self, account: AccountCredentials, *, to_handle: str, text: str, idempotency_key: str) -> Published:
        """Sends `text` to `to_handle` privately, once per idempotency key."""


def mention(handle: str) -> str:
    """A handle as a mention (`@ana@mastodon.social`, `@ana.bsky.social`): one `@`,
    then the handle without its own leading ones."""
    return "@" + handle.strip().lstrip("@")


def sends_direct_messages(connector) -> bool:
    """Whether a connector (class or instance) offers `send_dm`."""
    return callable(getattr(connector, "send_dm", None))


@dataclass(frozen=True)
class Identity:
    """What granted tokens can publish as, read from the platform when an account is
    connected through OAuth: the user, or (Facebook) each page the user manages."""

    # The platform's stable id of it: an account connected again is found by it.
    external_id: str
    handle: str
    # Non-secret settings its calls need (a LinkedIn author URN, a page id); the
    # service adds `api_url`, the platform API the account was connected through.
    options: dict = field(default_factory=dict)
    # Secrets beyond the tokens (a Facebook page's own token).
    secrets: dict = field(default_factory=dict, repr=False)


class OAuthConnector(Protocol):
    """A connector whose accounts are connected through OAuth 2 (socialpub.connectors.oauth):
    its flow, and what the granted tokens publish as."""

    # OAuthSpec: scopes, PKCE, client authentication at the token endpoint.
    oauth: object
    # Whether the platform takes a text-only post (Instagram, TikTok, YouTube and
    # Pinterest need media, which this API does not attach: their accounts are
    # connected for metrics).
    publishes_text: bool

    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        """What the token publishes as (at least one), read from the platform."""
