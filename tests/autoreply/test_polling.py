"""Live auto-replies: each active account's notifications polled from its cursor, the
first matching enabled rule answering through the connector once per message,
frequency respected, our own messages never answered, a backlog never answered."""
from __future__ import annotations

import datetime as dt

from persistence.autoreply import AutoReplyCursor
from socialpub.connectors.sandbox import SandboxConnector
from tests.autoreply.conftest import messages, sandbox_replies
from tests.autoreply.factories import make_account, make_rule

MASTODON_TOKEN = "mastodon-token-abc123"


def cursor_of(session, account) -> AutoReplyCursor:
    session.expire_all()
    return session.query(AutoReplyCursor).filter(AutoReplyCursor.account_id == account.id).one()


def mastodon(session, workspace, server):
    return make_account(session, workspace, platform="mastodon", connector="mastodon", handle="@socialpub",
                        options={"instance_url": server.base_url}, secrets={"access_token": MASTODON_TOKEN})


def bluesky(session, workspace, server):
    return make_account(session, workspace, platform="bluesky", connector="bluesky", handle="@socialpub.bsky.social",
                        options={"service_url": server.base_url},
                        secrets={"identifier": server.handle, "app_password": server.password})


class TestSandbox:
    def test_answers_the_sample_comment_on_a_new_post(self, session, workspace, poller):
        account = make_account(session, workspace, platform="mastodon", handle="@acme")
        rule = make_rule(session, workspace, keywords=(), pattern=".", reply_text="Hi {{author}} on {{platform}}")
        assert poller.run()["polled"] >= 1  # primes the cursors
        poller.publish_on_sandbox(account, "Our new latte", "post-1")
        result = poller.run()
        assert (result["read"], result["replied"]) == (1, 1)
        [message] = messages(session)
        assert message.status == "replied" and message.rule_id == rule.id
        assert message.external_id.startswith("sbx_in_sbx_")
        [reply] = sandbox_replies(session, account)
        assert reply.content == f"Hi {message.author} on mastodon" == message.reply_text
        assert message.reply_external_id == reply.external_id
        # The comment is the same every time for the same post: deterministic.
        assert message.text in SandboxConnector.SAMPLE_COMMENTS
        assert poller.run()["read"] == 0

    def test_a_backlog_is_recorded_not_answered(self, session, workspace, poller):
        account = make_account(session, workspace)
        make_rule(session, workspace, keywords=(), pattern=".")
        poller.publish_on_sandbox(account, "Old post", "old-1")
        result = poller.run()
        assert (result["read"], result["unanswered"], result["replied"]) == (1, 1, 0)
        assert "first poll" in messages(session)[0].reason
        assert sandbox_replies(session, account) == []

    def test_reading_the_same_messages_again_answers_nothing_twice(self, session, workspace, poller):
        account = make_account(session, workspace)
        make_rule(session, workspace, keywords=(), pattern=".")
        poller.run()
        poller.publish_on_sandbox(account, "One", "p1")
        poller.publish_on_sandbox(account, "Two", "p2")
        assert poller.run()["replied"] == 2
        cursor = cursor_of(session, account)
        cursor.cursor = None
        session.commit()
        again = poller.run()
        assert (again["read"], again["replied"]) == (2, 0)
        assert len(sandbox_replies(session, account)) == 2

    def test_no_enabled_rule_no_poll(self, session, workspace, poller):
        make_account(session, workspace)
        make_rule(session, workspace, enabled=False)
        assert poller.run()["polled"] == 0

    def test_no_match_is_recorded_unanswered(self, session, workspace, poller):
        account = make_account(session, workspace)
        make_rule(session, workspace, keywords=("zzzz",))
        poller.run()
        poller.publish_on_sandbox(account, "One", "p1")
        assert poller.run()["unanswered"] == 1
        assert messages(session)[0].reason == "no enabled rule matched"


class TestMastodon:
    def test_replies_under_the_mention_keeping_its_audience(self, session, workspace, poller,
                                                             mastodon_notifications_server):
        server = mastodon_notifications_server
        mastodon(session, workspace, server)
        make_rule(session, workspace, keywords=("price",), reply_text="Thanks {{author}}! See socialpub.dev",
                  message_types=("comment", "mention", "dm"))
        server.mention("old question about price")
        poller.run()
        asked = server.mention("What is the PRICE?")
        private = server.mention("price for me?", acct="kim@example.social", account_id="78", visibility="direct")
        server.mention("nice", acct="lee@example.social", account_id="79")
        result = poller.run()
        assert (result["read"], result["replied"], result["unanswered"]) == (3, 2, 1)
        replies = [post for post in server.posts if post["in_reply_to_id"]]
        assert [(r["in_reply_to_id"], r["visibility"], r["text"]) for r in replies] == [
            (asked["status"]["id"], "public", "@sam@example.social Thanks @sam@example.social! See socialpub.dev"),
            (private["status"]["id"], "direct", "@kim@example.social Thanks @kim@example.social! See socialpub.dev"),
        ]
        types = {m.external_id: m.message_type for m in messages(session)}
        assert types[asked["status"]["id"]] == "comment" and types[private["status"]["id"]] == "dm"
        assert server.calls_to("/api/v1/notifications")[-1].query["min_id"]

    def test_never_answers_our_own_account(self, session, workspace, poller, mastodon_notifications_server):
        server = mastodon_notifications_server
        mastodon(session, workspace, server)
        make_rule(session, workspace, keywords=(), pattern=".")
        poller.run()
        server.mention("talking to myself", acct="socialpub", account_id="1")
        result = poller.run()
        assert (result["own"], result["replied"]) == (1, 0)
        assert messages(session)[-1].status == "own"
        assert not [post for post in server.posts if post["in_reply_to_id"]]

    def test_once_per_author_within_the_window(self, session, workspace, poller, mastodon_notifications_server):
        server = mastodon_notifications_server
        mastodon(session, workspace, server)
        make_rule(session, workspace, keywords=("price",), frequency_mode="oncePerAuthor", window_hours=1)
        poller.run()
        server.mention("price?")
        server.mention("price again?")
        assert poller.run()["replied"] == 1
        # the next poll is a minute later: still within the hour
        server.mention("price, still?")
        assert poller.run()["replied"] == 0
        poller.now += dt.timedelta(hours=2)
        server.mention("price, tomorrow?")
        assert poller.run()["replied"] == 1

    def test_priority_decides_who_answers(self, session, workspace, poller, mastodon_notifications_server):
        server = mastodon_notifications_server
        mastodon(session, workspace, server)
        make_rule(session, workspace, name="General", priority=50, keywords=(), pattern=".", reply_text="General")
        specific = make_rule(session, workspace, name="Prices", priority=5, keywords=("price",), reply_text="Prices")
        poller.run()
        server.mention("price?")
        server.mention("hello")
        poller.run()
        texts = [post["text"] for post in server.posts if post["in_reply_to_id"]]
        assert texts == ["@sam@example.social Prices", "@sam@example.social General"]
        assert messages(session)[0].rule_id == specific.id

    def test_a_platform_failure_is_recorded_and_retried_next_time(self, session, workspace, poller,
                                                                   mastodon_notifications_server):
        server = mastodon_notifications_server
        account = mastodon(session, workspace, server)
        make_rule(session, workspace, keywords=("price",))
        server.fail_next(1, 503, path="/api/v1/notifications")
        poller.run()
        cursor = cursor_of(session, account)
        assert cursor.last_error and cursor.primed_at is None and cursor.lease_until is None
        poller.run()
        assert cursor_of(session, account).last_error is None


class TestBluesky:
    def test_replies_in_the_thread_and_skips_our_own(self, session, workspace, poller, bluesky_notifications_server):
        server = bluesky_notifications_server
        bluesky(session, workspace, server)
        make_rule(session, workspace, keywords=("price",), reply_text="Hi {{author}}")
        poller.run()
        ours = {"uri": f"at://{server.did}/app.bsky.feed.post/3labcdefghijk", "cid": "bafyreiours"}
        question = server.notify("what's the price?", on=ours)
        server.notify("price check on my own post", did=server.did, handle=server.handle, on=ours)
        server.notify("price?", reason="like")
        result = poller.run()
        assert (result["read"], result["replied"], result["own"]) == (2, 1, 1)
        [reply] = [post for post in server.posts if "reply" in post["record"]]
        assert reply["record"]["text"] == "Hi @ana.bsky.social"
        assert reply["record"]["reply"]["parent"] == {"uri": question["uri"], "cid": question["cid"]}
        assert reply["record"]["reply"]["root"] == ours

    def test_reads_back_across_pages_to_the_cursor(self, session, workspace, poller, bluesky_notifications_server):
        server = bluesky_notifications_server
        server.page_size = 2
        bluesky(session, workspace, server)
        make_rule(session, workspace, keywords=("price",))
        server.notify("price 0", reason="mention")
        poller.run()
        for n in range(5):
            server.notify(f"price {n + 1}", reason="mention", handle=f"u{n}.bsky.social", did=f"did:plc:u{n}")
        result = poller.run()
        assert (result["read"], result["replied"]) == (5, 5)
        assert poller.run()["read"] == 0
