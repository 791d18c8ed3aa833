"""The connector registry."""
import pytest

from socialpub.connectors.bluesky import BlueskyConnector
from socialpub.connectors.discord import DiscordConnector
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.registry import CONNECTORS, connector_for
from socialpub.connectors.telegram import TelegramConnector
from socialpub.outbound import GuardedClient


def test_names_map_to_their_connectors():
    expected = {
        "mastodon": MastodonConnector,
        "bluesky": BlueskyConnector,
        "telegram": TelegramConnector,
        "discord": DiscordConnector,
    }
    assert {name: CONNECTORS.get(name) for name in expected} == expected
    for name, cls in CONNECTORS.items():
        assert cls.name == name
        assert len(name) <= 20  # connected_accounts.connector


def test_connector_for_passes_the_client(client):
    connector = connector_for("mastodon", client)
    assert isinstance(connector, MastodonConnector) and connector.client is client


def test_connector_for_defaults_to_a_guarded_client():
    assert isinstance(connector_for("telegram").client, GuardedClient)


def test_an_unknown_name_is_refused():
    with pytest.raises(ValueError, match="no connector named 'myspace'"):
        connector_for("myspace")
