"""The Mastodon connector against a local fake instance."""
import datetime as dt

import pytest

from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.mastodon import MastodonConnector
from tests.support.connectors import (
    LATE, assert_no_secret, assert_rejected_unposted, assert_unknown_credential, auth_failure, comment_error,
    publish_error, publish_late_then_retry,
)

CONNECTOR = MastodonConnector  # what the `connector` fixture builds
TOKEN = "mastodon-token-abc123"


def account(base_url, token=TOKEN, **options):
    return AccountCredentials(
        account_id="acc_1", platform="mastodon", handle="@socialpub",
        options={"instance_url": base_url, **options}, secrets={"access_token": token},
    )


class TestPublish:
    def test_posts_the_status_and_maps_the_receipt(self, connector, mastodon_server):
        published = connector.publish(account(mastodon_server.base_url + "/"), "Hello, fediverse", idempotency_key="key-1")

        [call] = mastodon_server.calls
        assert (call.method, call.path) == ("POST", "/api/v1/statuses")
        assert call.headers["authorization"] == f"Bearer {TOKEN}"
        assert call.headers["idempotency-key"] == "key-1"
        assert call.headers["content-type"].startswith("application/json")
        assert call.body == {"status": "Hello, fediverse", "visibility": "public"}
        [status] = mastodon_server.posts
        assert published == Published(external_id=status["id"], url=status["url"])
        assert published.url.endswith(f"/@socialpub/{status['id']}")

    def test_comment_replies_to_the_parent_status(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        parent = connector.publish(acct, "The post", idempotency_key="post-1")

        reply = connector.comment(acct, parent=parent, content="First comment", idempotency_key="comment-1")

        call = mastodon_server.calls[-1]
        assert call.body == {"status": "First comment", "visibility": "public", "in_reply_to_id": parent.external_id}
        assert call.headers["idempotency-key"] == "comment-1"
        assert mastodon_server.statuses[reply.external_id]["in_reply_to_id"] == parent.external_id

    def test_reply_to_a_missing_status_is_permanent(self, connector, mastodon_server):
        comment_error(connector, account(mastodon_server.base_url), Published("999"), "platform_rejected",
                      transient=False, says="Record not found", content="hi")


    def test_a_redirect_that_keeps_the_post_is_followed(self, connector, mastodon_server):
        published = connector.publish(account(mastodon_server.base_url + "/kept"), "Hi", idempotency_key="k")
        [status] = mastodon_server.posts
        assert published.external_id == status["id"]

    def test_a_redirect_that_drops_the_post_is_permanent(self, connector, mastodon_server):
        assert_rejected_unposted(connector, account(mastodon_server.base_url + "/moved"), mastodon_server, "Hi",
                                 says="redirected to 127.0.0.1")


class TestDirectMessages:
    def test_a_direct_status_mentions_the_handle(self, connector, mastodon_server):
        sent = connector.send_dm(account(mastodon_server.base_url), to_handle="ana@mastodon.social", text="Hi Ana",
                                 idempotency_key="outreach-1")
        [call] = mastodon_server.calls
        assert call.body == {"status": "@ana@mastodon.social Hi Ana", "visibility": "direct"}
        assert call.headers["idempotency-key"] == "outreach-1"
        assert sent.external_id == mastodon_server.posts[0]["id"]

    def test_a_retried_message_is_sent_once(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        first = connector.send_dm(acct, to_handle="@@ana", text="Hi", idempotency_key="outreach-2")
        assert connector.send_dm(acct, to_handle="@@ana", text="Hi", idempotency_key="outreach-2") == first
        assert [post["text"] for post in mastodon_server.posts] == ["@ana Hi"]


class TestIdempotency:
    def test_the_same_key_delivers_once(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        first = connector.publish(acct, "Once only", idempotency_key="same")
        second = connector.publish(acct, "Once only", idempotency_key="same")

        assert first == second
        assert len(mastodon_server.posts) == 1

    def test_an_unusual_key_is_sent_as_a_stable_digest(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        first = connector.publish(acct, "Hi", idempotency_key="clé avec espaces")
        second = connector.publish(acct, "Hi", idempotency_key="clé avec espaces")

        assert first == second and len(mastodon_server.posts) == 1
        assert mastodon_server.calls[0].headers["idempotency-key"].startswith("sha256-")

    def test_different_keys_are_different_posts(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        connector.publish(acct, "One", idempotency_key="a")
        connector.publish(acct, "Two", idempotency_key="b")
        assert len(mastodon_server.posts) == 2

    def test_a_timeout_is_transient_and_its_retry_delivers_once(self, impatient_client, client, mastodon_server):
        acct = account(mastodon_server.base_url)
        mastodon_server.delay_next(LATE)  # the status is created, the answer is late
        retried = publish_late_then_retry(MastodonConnector, impatient_client, client, acct)

        [status] = mastodon_server.posts
        assert retried.external_id == status["id"]


class TestErrors:
    def test_invalid_token_is_an_auth_failure(self, connector, mastodon_server):
        assert_unknown_credential(connector, account(mastodon_server.base_url, token="wrong-token-xyz"),
                                  "wrong-token-xyz", says="The access token is invalid")

    def test_forbidden_is_an_auth_failure(self, connector, mastodon_server):
        mastodon_server.fail_next(1, 403, {"error": "This action is outside the authorized scopes"})
        auth_failure(connector, account(mastodon_server.base_url), says="outside the authorized scopes")

    def test_validation_failure_is_permanent(self, connector, mastodon_server):
        assert_rejected_unposted(connector, account(mastodon_server.base_url), mastodon_server, "x" * 501,
                                 says="character limit of 500")

    def test_rate_limit_uses_the_reset_time(self, connector, mastodon_server):
        reset = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=90)
        mastodon_server.fail_next(1, 429, headers={
            "X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": reset.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        })
        error = publish_error(connector, account(mastodon_server.base_url), "rate_limited", transient=True)
        assert 80 <= error.retry_after <= 90

    def test_rate_limit_uses_retry_after(self, connector, mastodon_server):
        mastodon_server.fail_next(1, 429, headers={"Retry-After": "12"})
        error = publish_error(connector, account(mastodon_server.base_url), "rate_limited", transient=True)
        assert error.retry_after == 12

    @pytest.mark.parametrize("status", [500, 503])
    def test_server_errors_are_transient(self, connector, mastodon_server, status):
        mastodon_server.fail_next(1, status, "<html>Bad gateway</html>")
        error = publish_error(connector, account(mastodon_server.base_url), "platform_unavailable", transient=True)
        assert error.retry_after is None
        assert mastodon_server.posts == []

    def test_malformed_reply_is_transient(self, connector, mastodon_server):
        mastodon_server.fail_next(1, 200, "<html>not json</html>")
        publish_error(connector, account(mastodon_server.base_url), "platform_error", transient=True)

    def test_reply_without_an_id_is_transient(self, connector, mastodon_server):
        mastodon_server.fail_next(1, 200, {"url": "https://example.test/@a/1"})
        publish_error(connector, account(mastodon_server.base_url), "platform_error", transient=True)

    def test_unreachable_instance_is_a_transient_network_error(self, connector, closed_port):
        publish_error(connector, account(f"http://127.0.0.1:{closed_port}"), "network_error", transient=True)

    def test_a_private_destination_is_refused(self, refusing_client, mastodon_server):
        publish_error(MastodonConnector(refusing_client), account(mastodon_server.base_url), "destination_refused",
                      transient=False)
        assert mastodon_server.calls == []

    def test_unusable_account_settings_are_permanent(self, connector):
        bad = AccountCredentials(account_id="a", platform="mastodon", handle="h", options={}, secrets={})
        publish_error(connector, bad, "account_invalid", transient=False, auth_failed=True)

    def test_the_token_never_appears_in_errors(self, connector, mastodon_server):
        acct = account(mastodon_server.base_url)
        mastodon_server.fail_next(1, 500, {"error": f"crash while handling {TOKEN}"})
        error = publish_error(connector, acct, "platform_unavailable", transient=True)
        assert_no_secret(error, TOKEN)
        mastodon_server.fail_next(1, 422, {"error": f"Validation failed for {TOKEN}"})
        error = publish_error(connector, acct, "platform_rejected", transient=False)
        assert_no_secret(error, TOKEN)
        assert "[redacted]" in error.message


class TestValidate:
    def test_accepts_a_complete_account(self):
        MastodonConnector().validate({"instance_url": "https://mastodon.social"}, {"access_token": "abc"})

    @pytest.mark.parametrize(
        "options, secrets, expected",
        [
            ({}, {"access_token": "abc"}, "instance URL"),
            ({"instance_url": "ftp://mastodon.social"}, {"access_token": "abc"}, "http or https"),
            ({"instance_url": "mastodon.social"}, {"access_token": "abc"}, "http or https"),
            ({"instance_url": "https://mastodon.social?x=1"}, {"access_token": "abc"}, "query"),
            ({"instance_url": "https://user:pw@mastodon.social"}, {"access_token": "abc"}, "user name"),
            ({"instance_url": 42}, {"access_token": "abc"}, "string"),
            ({"instance_url": "https://mastodon.social"}, {}, "access token"),
            ({"instance_url": "https://mastodon.social"}, {"access_token": "  "}, "access token"),
            ({"instance_url": "https://mastodon.social"}, {"access_token": 7}, "access token"),
            (None, {"access_token": "abc"}, "options"),
        ],
    )
    def test_rejects(self, options, secrets, expected):
        with pytest.raises(ValueError, match=expected):
            MastodonConnector().validate(options, secrets)
