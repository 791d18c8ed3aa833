"""The Discord connector against a local fake webhook endpoint."""
import pytest

from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.discord import DiscordConnector
from tests.support.connectors import (
    LATE, assert_no_secret, assert_rejected_unposted, assert_unknown_credential, auth_failure, comment_error,
    publish_error,
)

CONNECTOR = DiscordConnector  # what the `connector` fixture builds
TOKEN = "fakeWebhookToken_AbCdEf-0123456789"


def account(webhook_url, **options):
    return AccountCredentials(
        account_id="acc_1", platform="discord", handle="#announcements",
        options=options, secrets={"webhook_url": webhook_url},
    )


class TestPublish:
    def test_executes_the_webhook_and_maps_the_message(self, connector, discord_server):
        published = connector.publish(account(discord_server.webhook_url), "Hello, Discord", idempotency_key="k")

        [call] = discord_server.calls
        assert (call.method, call.path) == ("POST", f"/api/webhooks/{discord_server.webhook_id}/{TOKEN}")
        assert call.query == {"wait": "true"}
        assert call.body == {"content": "Hello, Discord", "allowed_mentions": {"parse": []}}
        [message] = discord_server.posts
        assert published == Published(external_id=message["id"], url=None,
                                       reference={"channel_id": discord_server.channel_id})

    def test_the_url_is_built_when_the_server_is_known(self, connector, discord_server):
        discord_server.include_guild_id = True
        published = connector.publish(account(discord_server.webhook_url), "Hi", idempotency_key="k")

        message = discord_server.posts[0]
        assert published.url == (
            f"https://discord.com/channels/{discord_server.guild_id}/{discord_server.channel_id}/{message['id']}"
        )

    def test_the_server_id_may_come_from_the_account_options(self, connector, discord_server):
        published = connector.publish(account(discord_server.webhook_url, guild_id="42"), "Hi", idempotency_key="k")
        assert published.url.startswith("https://discord.com/channels/42/")

    def test_a_thread_id_in_the_webhook_url_is_kept(self, connector, discord_server):
        connector.publish(account(discord_server.webhook_url + "?thread_id=555"), "Hi", idempotency_key="k")
        assert discord_server.calls[0].query == {"thread_id": "555", "wait": "true"}

    def test_comments_are_not_supported(self, connector, discord_server):
        assert DiscordConnector.supports_comments is False
        comment_error(connector, account(discord_server.webhook_url), Published("1"), "comments_unsupported",
                      transient=False)
        assert discord_server.calls == []


class TestErrors:
    def test_a_wrong_token_is_an_auth_failure(self, connector, discord_server):
        wrong = f"{discord_server.base_url}/api/webhooks/{discord_server.webhook_id}/someOtherToken_123"
        assert_unknown_credential(connector, account(wrong), "someOtherToken_123", says="Invalid Webhook Token")

    def test_a_deleted_webhook_is_an_auth_failure(self, connector, discord_server):
        gone = f"{discord_server.base_url}/api/webhooks/999/{TOKEN}"
        auth_failure(connector, account(gone), says="Unknown Webhook")

    def test_a_too_long_message_is_permanent(self, connector, discord_server):
        assert_rejected_unposted(connector, account(discord_server.webhook_url), discord_server, "x" * 2001,
                                 says="content: Must be 2000 or fewer in length.")

    def test_rate_limit_uses_the_body_retry_after(self, connector, discord_server):
        discord_server.fail_next(1, 429, {"message": "You are being rate limited.", "retry_after": 2.75, "global": False},
                                 headers={"Retry-After": "3"})
        error = publish_error(connector, account(discord_server.webhook_url), "rate_limited", transient=True)
        assert error.retry_after == 2.75

    def test_rate_limit_falls_back_to_the_header(self, connector, discord_server):
        discord_server.fail_next(1, 429, "<html>Cloudflare: error 1015</html>", headers={"Retry-After": "30"})
        error = publish_error(connector, account(discord_server.webhook_url), "rate_limited", transient=True)
        assert error.retry_after == 30

    @pytest.mark.parametrize("status", [500, 502])
    def test_server_errors_are_transient(self, connector, discord_server, status):
        discord_server.fail_next(1, status)
        publish_error(connector, account(discord_server.webhook_url), "platform_unavailable", transient=True)

    def test_timeout_is_transient(self, impatient_client, discord_server):
        discord_server.delay_next(LATE)
        publish_error(DiscordConnector(impatient_client), account(discord_server.webhook_url), "network_error",
                      transient=True)

    @pytest.mark.parametrize("body", ["not json", {"id": "not-a-snowflake"}])
    def test_a_malformed_answer_is_transient(self, connector, discord_server, body):
        discord_server.fail_next(1, 200, body)
        publish_error(connector, account(discord_server.webhook_url), "platform_error", transient=True)

    def test_the_webhook_token_never_appears_in_errors(self, connector, discord_server, closed_port, refusing_client):
        acct = account(discord_server.webhook_url)
        discord_server.fail_next(1, 400, {"message": f"bad webhook {discord_server.webhook_url}", "code": 0})
        discord_server.fail_next(1, 401, {"message": f"Invalid Webhook Token {TOKEN}", "code": 50027})
        unreachable = f"http://127.0.0.1:{closed_port}/api/webhooks/1/{TOKEN}"
        errors = [
            publish_error(connector, acct, "platform_rejected", transient=False),
            auth_failure(connector, acct),
            publish_error(connector, account(unreachable), "network_error", transient=True),
            publish_error(DiscordConnector(refusing_client), acct, "destination_refused", transient=False),
        ]
        for error in errors:
            assert_no_secret(error, TOKEN)


class TestValidate:
    def test_accepts_discord_webhook_urls(self):
        for url in (
            "https://discord.com/api/webhooks/1234567890/abcDEF_ghi-JKL",
            "https://discordapp.com/api/webhooks/1234567890/abcDEF_ghi-JKL",
            "https://discord.com/api/v10/webhooks/1234567890/abcDEF_ghi-JKL?thread_id=1",
        ):
            DiscordConnector().validate({}, {"webhook_url": url})

    @pytest.mark.parametrize(
        "options, secrets, expected",
        [
            ({}, {}, "webhook URL"),
            ({}, {"webhook_url": "ftp://discord.com/api/webhooks/1/abc"}, "http or https"),
            ({}, {"webhook_url": "https://discord.com/channels/1/2"}, "api/webhooks"),
            ({}, {"webhook_url": "https://discord.com/api/webhooks/1"}, "api/webhooks"),
            ({}, {"webhook_url": "https://discord.com/api/webhooks/abc/def"}, "api/webhooks"),
            ({"guild_id": "general"}, {"webhook_url": "https://discord.com/api/webhooks/1/abc"}, "guild_id"),
        ],
    )
    def test_rejects(self, options, secrets, expected):
        with pytest.raises(ValueError, match=expected) as caught:
            DiscordConnector().validate(options, secrets)
        assert "abc" not in str(caught.value).replace("api/webhooks", "")
