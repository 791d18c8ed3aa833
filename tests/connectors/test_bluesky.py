"""The Bluesky connector against a local fake PDS."""
import datetime as dt
import re
import time

import pytest

from socialpub.connectors.base import AccountCredentials, Published
from socialpub.connectors.bluesky import BlueskyConnector, record_key
from tests.support.platform_servers import graphemes
from tests.support.connectors import (
    LATE, RecordingClient, assert_no_secret, assert_rejected_unposted, assert_unknown_credential, auth_failure,
    comment_error, publish_error, publish_late_then_retry,
)

CONNECTOR = BlueskyConnector  # what the `connector` fixture builds
HANDLE = "socialpub.bsky.social"
PASSWORD = "abcd-efgh-ijkl-mnop"
TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")


def account(base_url, identifier=HANDLE, password=PASSWORD):
    return AccountCredentials(
        account_id="acc_1", platform="bluesky", handle=f"@{identifier}",
        options={"service_url": base_url}, secrets={"identifier": identifier, "app_password": password},
    )


class TestRecordKey:
    def test_is_a_deterministic_tid(self):
        assert record_key("post-1") == record_key("post-1")
        assert record_key("post-1") != record_key("post-2")
        for key in ("x", "post-1", "a" * 500, "ключ", "00000000-0000-0000-0000-000000000000"):
            assert TID.match(record_key(key))

    def test_timestamp_half_is_a_plausible_past_time(self):
        alphabet = "234567abcdefghijklmnopqrstuvwxyz"
        for key in ("post-1", "post-2", "comment-9"):
            value = 0
            for char in record_key(key):
                value = value * 32 + alphabet.index(char)
            when = dt.datetime.fromtimestamp((value >> 10) / 1_000_000, dt.timezone.utc)
            assert dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc) <= when < dt.datetime.now(dt.timezone.utc)


class TestPublish:
    def test_signs_in_and_creates_the_post_record(self, connector, bluesky_server):
        published = connector.publish(account(bluesky_server.base_url), "Hello, Bluesky", idempotency_key="post-1")

        session_call, create_call = bluesky_server.calls
        assert session_call.path == "/xrpc/com.atproto.server.createSession"
        assert session_call.body == {"identifier": HANDLE, "password": PASSWORD}
        assert create_call.path == "/xrpc/com.atproto.repo.createRecord"
        assert create_call.headers["authorization"].startswith("Bearer eyJ")
        body = create_call.body
        assert (body["repo"], body["collection"], body["rkey"]) == (bluesky_server.did, "app.bsky.feed.post", record_key("post-1"))
        record = body["record"]
        assert (record["$type"], record["text"]) == ("app.bsky.feed.post", "Hello, Bluesky")
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", record["createdAt"])
        assert "reply" not in record

        [post] = bluesky_server.posts
        assert published == Published(
            external_id=post["uri"],
            url=f"https://bsky.app/profile/{bluesky_server.did}/post/{record_key('post-1')}",
            reference={"uri": post["uri"], "cid": post["cid"]},
        )

    def test_the_service_defaults_to_bsky_social(self, connector):
        connector.validate({}, {"identifier": "someone.bsky.social", "app_password": "x"})
        without_a_service = AccountCredentials(
            account_id="acc_1", platform="bluesky", handle=f"@{HANDLE}", options={},
            secrets={"identifier": HANDLE, "app_password": PASSWORD},
        )
        client = RecordingClient()
        publish_error(BlueskyConnector(client), without_a_service, "network_error",
                      transient=True, content="Hello", idempotency_key="post-1")
        assert client.sent == [("POST", "https://bsky.social/xrpc/com.atproto.server.createSession")]


class TestThreading:
    def test_comment_replies_with_root_and_parent(self, connector, bluesky_server):
        acct = account(bluesky_server.base_url)
        post = connector.publish(acct, "The post", idempotency_key="post-1")

        reply = connector.comment(acct, parent=post, content="First comment", idempotency_key="comment-1")

        parent_ref = {"uri": post.reference["uri"], "cid": post.reference["cid"]}
        assert bluesky_server.posts[-1]["record"]["reply"] == {"root": parent_ref, "parent": parent_ref}
        assert reply.reference["root"] == parent_ref
        assert reply.external_id == bluesky_server.posts[-1]["uri"]

    def test_a_reply_to_a_reply_keeps_the_thread_root(self, connector, bluesky_server):
        acct = account(bluesky_server.base_url)
        post = connector.publish(acct, "The post", idempotency_key="post-1")
        first = connector.comment(acct, parent=post, content="One", idempotency_key="comment-1")

        connector.comment(acct, parent=first, content="Two", idempotency_key="comment-2")

        reply = bluesky_server.posts[-1]["record"]["reply"]
        assert reply["root"] == {"uri": post.reference["uri"], "cid": post.reference["cid"]}
        assert reply["parent"] == {"uri": first.reference["uri"], "cid": first.reference["cid"]}

    def test_a_parent_stored_without_its_cid_is_looked_up(self, connector, bluesky_server):
        acct = account(bluesky_server.base_url)
        post = connector.publish(acct, "The post", idempotency_key="post-1")

        connector.comment(acct, parent=Published(external_id=post.external_id), content="Hi", idempotency_key="c-1")

        assert bluesky_server.calls_to("getRecord")
        assert bluesky_server.posts[-1]["record"]["reply"]["parent"]["cid"] == post.reference["cid"]

    def test_a_missing_parent_is_permanent(self, connector, bluesky_server):
        gone = Published(external_id=f"at://{bluesky_server.did}/app.bsky.feed.post/3jzfcijpj2z2a")
        comment_error(connector, account(bluesky_server.base_url), gone, "platform_rejected", transient=False)


class TestIdempotency:
    @pytest.mark.parametrize(
        "duplicate",
        [
            (400, {"error": "InvalidRequest", "message": "Record already exists"}),
            (409, {"error": "RecordAlreadyExists", "message": "Record already exists"}),
            (500, {"error": "InternalServerError", "message": "Internal Server Error"}),
        ],
        ids=["invalid-request", "conflict", "server-error"],
    )
    def test_a_retry_with_the_same_key_delivers_once(self, connector, bluesky_server, duplicate):
        bluesky_server.duplicate_answer = duplicate
        acct = account(bluesky_server.base_url)
        first = connector.publish(acct, "Once only", idempotency_key="post-1")

        second = connector.publish(acct, "Once only", idempotency_key="post-1")

        assert second == first
        assert len(bluesky_server.posts) == 1
        assert len(bluesky_server.calls_to("createRecord")) == 2

    def test_a_timeout_is_transient_and_its_retry_delivers_once(self, impatient_client, client, bluesky_server):
        acct = account(bluesky_server.base_url)
        bluesky_server.delay_next(LATE, path="createRecord")  # written, answered late
        retried = publish_late_then_retry(BlueskyConnector, impatient_client, client, acct)

        [post] = bluesky_server.posts
        assert retried.external_id == post["uri"]

    def test_a_comment_retry_keeps_its_thread_reference(self, connector, bluesky_server):
        acct = account(bluesky_server.base_url)
        post = connector.publish(acct, "The post", idempotency_key="post-1")
        first = connector.comment(acct, parent=post, content="Hi", idempotency_key="c-1")

        again = connector.comment(acct, parent=post, content="Hi", idempotency_key="c-1")

        assert again == first
        assert len(bluesky_server.posts) == 2


class TestErrors:
    def test_a_wrong_app_password_is_an_auth_failure(self, connector, bluesky_server):
        assert_unknown_credential(connector, account(bluesky_server.base_url, password="zzzz-zzzz-zzzz-zzzz"),
                                  "zzzz-zzzz-zzzz-zzzz", says="Invalid identifier or password")

    def test_an_account_asking_for_a_sign_in_code_is_an_auth_failure(self, connector, bluesky_server):
        bluesky_server.require_auth_factor = True
        auth_failure(connector, account(bluesky_server.base_url), says="app password")

    @pytest.mark.parametrize(
        "status, body",
        [
            (400, {"error": "ExpiredToken", "message": "Token has expired"}),
            (401, {"error": "InvalidToken", "message": "Token could not be verified"}),
            (401, {"error": "AuthenticationRequired", "message": "Authentication Required"}),
        ],
    )
    def test_a_refused_session_is_an_auth_failure(self, connector, bluesky_server, status, body):
        bluesky_server.fail_next(1, status, body, path="createRecord")
        auth_failure(connector, account(bluesky_server.base_url), says=body["error"])
        assert not bluesky_server.calls_to("getRecord")

    def test_an_invalid_record_is_permanent(self, connector, bluesky_server):
        assert_rejected_unposted(connector, account(bluesky_server.base_url), bluesky_server, "é" * 301,
                                 says="300 graphemes")

    def test_the_fake_counts_graphemes_not_code_points(self):
        assert graphemes("e\u0301" * 300) == 300
        assert graphemes("👍🏽" * 3 + "🇫🇷") == 4
        assert graphemes("👩\u200d💻") == 1

    @pytest.mark.parametrize("path", ["createSession", "createRecord"])
    def test_rate_limit_is_transient_with_the_reset_time(self, connector, bluesky_server, path):
        bluesky_server.fail_next(1, 429, path=path, headers={
            "ratelimit-limit": "30", "ratelimit-remaining": "0",
            "ratelimit-reset": str(int(time.time()) + 120), "ratelimit-policy": "30;w=300",
        })
        error = publish_error(connector, account(bluesky_server.base_url), "rate_limited", transient=True)
        assert 110 <= error.retry_after <= 120

    @pytest.mark.parametrize("path", ["createSession", "createRecord"])
    def test_server_errors_are_transient(self, connector, bluesky_server, path):
        bluesky_server.fail_next(1, 502, "<html>Bad Gateway</html>", path=path)
        publish_error(connector, account(bluesky_server.base_url), "platform_unavailable", transient=True)
        assert bluesky_server.posts == []

    @pytest.mark.parametrize("body", ["not json", {"accessJwt": "x"}])
    def test_a_malformed_session_is_transient(self, connector, bluesky_server, body):
        bluesky_server.fail_next(1, 200, body, path="createSession")
        publish_error(connector, account(bluesky_server.base_url), "platform_error", transient=True)

    def test_a_malformed_record_answer_is_transient(self, connector, bluesky_server):
        bluesky_server.fail_next(1, 200, {"uri": "at://x"}, path="createRecord")
        publish_error(connector, account(bluesky_server.base_url), "platform_error", transient=True)

    def test_secrets_never_appear_in_errors(self, connector, bluesky_server):
        acct = account(bluesky_server.base_url)
        bluesky_server.fail_next(1, 400, {"error": "InvalidRequest", "message": f"bad password {PASSWORD}"},
                                 path="createSession")
        error = publish_error(connector, acct, "platform_rejected", transient=False)
        assert_no_secret(error, PASSWORD)

        # The refused sign-in made no session, so the next one is the fake's first.
        access = "eyJhbGciOiJFUzI1NksifQ.session1.sig"
        bluesky_server.fail_next(1, 500, {"error": "InternalServerError", "message": f"bad token {access}"},
                                 path="createRecord")
        error = publish_error(connector, acct, "platform_unavailable", transient=True)
        assert_no_secret(error, PASSWORD, access)
        assert "[redacted]" in error.message

    def test_a_private_destination_is_refused(self, refusing_client, bluesky_server):
        publish_error(BlueskyConnector(refusing_client), account(bluesky_server.base_url), "destination_refused",
                      transient=False)


class TestValidate:
    def test_accepts_a_complete_account(self):
        BlueskyConnector().validate({"service_url": "https://bsky.social"},
                                    {"identifier": HANDLE, "app_password": PASSWORD})

    @pytest.mark.parametrize(
        "options, secrets, expected",
        [
            ({"service_url": "bsky.social"}, {"identifier": HANDLE, "app_password": PASSWORD}, "http or https"),
            ({"service_url": "javascript:alert(1)"}, {"identifier": HANDLE, "app_password": PASSWORD}, "http or https"),
            ({}, {"app_password": PASSWORD}, "handle"),
            ({}, {"identifier": "two words", "app_password": PASSWORD}, "spaces"),
            ({}, {"identifier": HANDLE}, "app password"),
            ({}, {"identifier": HANDLE, "app_password": ""}, "app password"),
            ({}, None, "secrets"),
        ],
    )
    def test_rejects(self, options, secrets, expected):
        with pytest.raises(ValueError, match=expected):
            BlueskyConnector().validate(options, secrets)
