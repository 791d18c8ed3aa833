"""Connector names (as stored on a connected account) and their classes."""
from __future__ import annotations

from socialpub.connectors.base import Connector
from socialpub.connectors.bluesky import BlueskyConnector
from socialpub.connectors.discord import DiscordConnector
from socialpub.connectors.facebook import FacebookConnector
from socialpub.connectors.instagram import InstagramConnector
from socialpub.connectors.linkedin import LinkedInConnector
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.pinterest import PinterestConnector
from socialpub.connectors.sandbox import SandboxConnector
from socialpub.connectors.telegram import TelegramConnector
from socialpub.connectors.threads import ThreadsConnector
from socialpub.connectors.tiktok import TikTokConnector
from socialpub.connectors.twitter import TwitterConnector
from socialpub.connectors.youtube import YoutubeConnector
from socialpub.outbound import GuardedClient

CONNECTORS: dict[str, type] = {
    "sandbox": SandboxConnector,
    "mastodon": MastodonConnector,
    "bluesky": BlueskyConnector,
    "telegram": TelegramConnector,
    "discord": DiscordConnector,
    "twitter": TwitterConnector,
    "facebook": FacebookConnector,
    "youtube": YoutubeConnector,
    "pinterest": PinterestConnector,
    "linkedin": LinkedInConnector,
    "instagram": InstagramConnector,
    "tiktok": TikTokConnector,
    "threads": ThreadsConnector,
}


def connector_for(name: str, client: GuardedClient | None = None) -> Connector:
    """A connector instance for a connector name; ValueError for an unknown one."""
    try:
        cls = CONNECTORS[name]
    except (KeyError, TypeError):
        raise ValueError(f"no connector named {name!r}") from None
    if cls is SandboxConnector:
        return cls()  # no network: nothing to give it
    return cls(client)
