"""The Telegram connector against a local fake Bot API."""
import pytest

from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.telegram import TelegramConnector
from tests.support.connectors import (
    LATE, assert_no_secret, assert_rejected_unposted, assert_unknown_credential, auth_failure, comment_error,
    publish_error,
)

CONNECTOR = TelegramConnector  # what the `connector` fixture builds
TOKEN = "123456789:AAHfakeBotTokenForTestsOnly_abcdefg"
CHANNEL = -1001234567890  # has a public username in the fake
GROUP = -1009876543210  # private, no username


def account(base_url, chat_id=CHANNEL, token=TOKEN):
    return AccountCredentials(
        account_id="acc_1", platform="telegram", handle="@socialpubnews",
        options={"api_url": base_url, "chat_id": chat_id}, secrets={"bot_token": token},
    )


class TestPublish:
    def test_sends_the_message_and_maps_the_receipt(self, connector, telegram_server):
        published = connector.publish(account(telegram_server.base_url), "Hello, Telegram", idempotency_key="k")

        [call] = telegram_server.calls
        assert (call.method, call.path) == ("POST", f"/bot{TOKEN}/sendMessage")
        assert call.body == {"chat_id": CHANNEL, "text": "Hello, Telegram"}
        [message] = telegram_server.posts
        assert published == Published(
            external_id=f"{CHANNEL}:{message['message_id']}",
            url=f"https://t.me/socialpubnews/{message['message_id']}",
        )

    def test_a_chat_without_a_username_has_no_url(self, connector, telegram_server):
        published = connector.publish(account(telegram_server.base_url, chat_id=str(GROUP)), "Hi", idempotency_key="k")

        assert telegram_server.calls[0].body["chat_id"] == GROUP
        assert published.url is None
        assert published.external_id == f"{GROUP}:{telegram_server.posts[0]['message_id']}"

    def test_a_channel_username_is_sent_as_is(self, connector, telegram_server):
        published = connector.publish(account(telegram_server.base_url, chat_id="@socialpubnews"), "Hi", idempotency_key="k")

        assert telegram_server.calls[0].body["chat_id"] == "@socialpubnews"
        assert published.external_id.startswith(f"{CHANNEL}:")

    def test_the_default_api_is_the_public_bot_api(self):
        TelegramConnector().validate({"chat_id": "@socialpubnews"}, {"bot_token": TOKEN})


class TestComment:
    def test_replies_to_the_parent_message(self, connector, telegram_server):
        acct = account(telegram_server.base_url)
        post = connector.publish(acct, "The post", idempotency_key="p")

        reply = connector.comment(acct, parent=post, content="A comment", idempotency_key="c")

        parent_id = int(post.external_id.rsplit(":", 1)[1])
        assert telegram_server.calls[-1].body == {
            "chat_id": CHANNEL, "text": "A comment", "reply_parameters": {"message_id": parent_id},
        }
        assert telegram_server.posts[-1]["reply_to_message"]["message_id"] == parent_id
        assert reply.external_id == f"{CHANNEL}:{telegram_server.posts[-1]['message_id']}"

    def test_a_missing_parent_is_permanent(self, connector, telegram_server):
        comment_error(connector, account(telegram_server.base_url), Published(f"{CHANNEL}:999"), "platform_rejected",
                      transient=False, says="message to be replied not found")

    def test_a_parent_without_a_message_id_is_permanent(self, connector, telegram_server):
        comment_error(connector, account(telegram_server.base_url), Published("nonsense"), "platform_rejected",
                      transient=False)
        assert telegram_server.calls == []


class TestErrors:
    def test_an_unknown_token_is_an_auth_failure(self, connector, telegram_server):
        other = "987654321:AAHsomeOtherBotTokenNotKnownHere_xyz"
        assert_unknown_credential(connector, account(telegram_server.base_url, token=other), other, says="Unauthorized")

    def test_not_found_is_an_auth_failure(self, connector, telegram_server):
        telegram_server.fail_next(1, 404)
        auth_failure(connector, account(telegram_server.base_url))

    def test_a_kicked_bot_is_an_auth_failure(self, connector, telegram_server):
        telegram_server.kicked.add(CHANNEL)
        auth_failure(connector, account(telegram_server.base_url), says="kicked")

    def test_a_too_long_message_is_permanent(self, connector, telegram_server):
        assert_rejected_unposted(connector, account(telegram_server.base_url), telegram_server, "x" * 4097,
                                 says="message is too long")

    def test_an_unknown_chat_is_permanent(self, connector, telegram_server):
        publish_error(connector, account(telegram_server.base_url, chat_id=-100555), "platform_rejected",
                      transient=False, says="chat not found")

    def test_a_migrated_group_names_its_new_id(self, connector, telegram_server):
        telegram_server.fail_next(1, 400, {"ok": False, "error_code": 400,
                                           "description": "Bad Request: group chat was upgraded to a supergroup chat",
                                           "parameters": {"migrate_to_chat_id": -1001111111111}})
        publish_error(connector, account(telegram_server.base_url), "platform_rejected", transient=False,
                      says="-1001111111111")

    def test_rate_limit_is_transient_with_retry_after(self, connector, telegram_server):
        telegram_server.fail_next(1, 429, {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 17",
                                           "parameters": {"retry_after": 17}})
        error = publish_error(connector, account(telegram_server.base_url), "rate_limited", transient=True)
        assert error.retry_after == 17

    @pytest.mark.parametrize("status, body", [
        (500, {"ok": False, "error_code": 500, "description": "Internal Server Error"}),
        (502, "<html><body><h1>502 Bad Gateway</h1></body></html>"),
    ])
    def test_server_errors_are_transient(self, connector, telegram_server, status, body):
        telegram_server.fail_next(1, status, body)
        publish_error(connector, account(telegram_server.base_url), "platform_unavailable", transient=True)

    def test_timeout_is_transient(self, impatient_client, telegram_server):
        telegram_server.delay_next(LATE)
        publish_error(TelegramConnector(impatient_client), account(telegram_server.base_url), "network_error",
                      transient=True)

    @pytest.mark.parametrize("body", ["not json", {"ok": True, "result": {"chat": {}}}])
    def test_a_malformed_answer_is_transient(self, connector, telegram_server, body):
        telegram_server.fail_next(1, 200, body)
        publish_error(connector, account(telegram_server.base_url), "platform_error", transient=True)

    def test_the_token_never_appears_in_errors(self, connector, telegram_server, closed_port, refusing_client):
        acct = account(telegram_server.base_url)
        telegram_server.fail_next(1, 400, {"ok": False, "error_code": 400, "description": f"Bad Request: /bot{TOKEN}/x"})
        telegram_server.fail_next(1, 500, f"upstream {TOKEN} failed")
        errors = [
            publish_error(connector, acct, "platform_rejected", transient=False),
            publish_error(connector, acct, "platform_unavailable", transient=True),
            publish_error(connector, account(f"http://127.0.0.1:{closed_port}"), "network_error", transient=True),
            publish_error(TelegramConnector(refusing_client), acct, "destination_refused", transient=False),
        ]
        for error in errors:
            assert_no_secret(error, TOKEN, TOKEN.split(":")[1])


class TestValidate:
    @pytest.mark.parametrize(
        "options, secrets, expected",
        [
            ({"chat_id": CHANNEL, "api_url": "file:///etc/passwd"}, {"bot_token": TOKEN}, "http or https"),
            ({}, {"bot_token": TOKEN}, "chat id"),
            ({"chat_id": "not a chat"}, {"bot_token": TOKEN}, "chat id"),
            ({"chat_id": True}, {"bot_token": TOKEN}, "chat id"),
            ({"chat_id": CHANNEL}, {}, "bot token"),
            ({"chat_id": CHANNEL}, {"bot_token": "not-a-token"}, "BotFather"),
            ({"chat_id": CHANNEL}, {"bot_token": "123:short"}, "BotFather"),
        ],
    )
    def test_rejects(self, options, secrets, expected):
        with pytest.raises(ValueError, match=expected) as caught:
            TelegramConnector().validate(options, secrets)
        assert "not-a-token" not in str(caught.value)

    def test_accepts_numbers_and_usernames(self):
        for chat in (CHANNEL, str(CHANNEL), "12345", "@socialpubnews"):
            TelegramConnector().validate({"chat_id": chat}, {"bot_token": TOKEN})
