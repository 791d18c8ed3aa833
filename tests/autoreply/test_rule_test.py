"""POST /auto-reply/rules/{ruleId}/test: the rule's verdict with its reason, its
reply rendered, which enabled rule would answer, every enabled rule's verdict; it
sends and records nothing and works on a disabled rule."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select

from persistence.sandbox import SandboxCall
from persistence.autoreply import AutoReplyMessage
from socialpub import clock
from tests.autoreply.factories import make_account, make_rule
from tests.templates.factories import make_template


def run(client, key, rule, text, *, platform="mastodon", message_type="comment", author=None) -> dict:
    body = {"text": text, "platform": platform, "messageType": message_type}
    if author is not None:
        body["author"] = author
    response = client.post(f"/api/v1/auto-reply/rules/{rule.id}/test", headers=key.headers, json=body)
    assert response.status_code == 200, response.text
    return response.json()["data"]


class TestMatching:
    def test_any(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=("price", "how much"))
        hit = run(client, key, rule, "How MUCH is the latte?")
        assert hit["matched"] is True and "how much" in hit["reason"]
        miss = run(client, key, rule, "Lovely photo")
        assert miss["matched"] is False and "none of the keywords" in miss["reason"]

    def test_all(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=("order", "late"), match="all")
        assert run(client, key, rule, "My order is late")["matched"] is True
        miss = run(client, key, rule, "My order arrived")
        assert miss["matched"] is False and "'late'" in miss["reason"]

    def test_exact(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=("info",), match="exact")
        assert run(client, key, rule, "  INFO ")["matched"] is True
        assert run(client, key, rule, "more info please")["matched"] is False

    def test_whole_word(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=("cost",), match="wholeWord")
        assert run(client, key, rule, "What does it cost?")["matched"] is True
        miss = run(client, key, rule, "Costume party!")
        assert miss["matched"] is False and "whole word" in miss["reason"]

    def test_excluded_keywords_win(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=("price",), exclude=("refund",))
        miss = run(client, key, rule, "Price of a REFUND?")
        assert miss["matched"] is False and "refund" in miss["reason"]

    def test_pattern_with_re2_and_with_keywords(self, client, session, key, workspace):
        rule = make_rule(session, workspace, keywords=(), pattern=r"(?i)order\s*#?\d{4,}")
        assert run(client, key, rule, "where is Order #12345")["matched"] is True
        assert run(client, key, rule, "where is my order")["reason"] == "the pattern does not match the text"
        both = make_rule(session, workspace, name="Both", keywords=("late",), pattern=r"\d+")
        assert run(client, key, both, "late again")["matched"] is False
        matched = run(client, key, both, "order 12 is late")
        assert matched["matched"] is True and "pattern" in matched["reason"] and "late" in matched["reason"]

    def test_a_hostile_pattern_answers_at_once(self, client, session, key, workspace):
        # Exponential for a backtracking engine; linear for RE2.
        rule = make_rule(session, workspace, keywords=(), pattern="(a+)+$")
        assert run(client, key, rule, "a" * 5000 + "!")["matched"] is False

    def test_platform_and_message_type(self, client, session, key, workspace):
        rule = make_rule(session, workspace, platforms=("bluesky",), message_types=("mention",))
        assert "mastodon" in run(client, key, rule, "price?", platform="mastodon", message_type="mention")["reason"]
        assert "comment" in run(client, key, rule, "price?", platform="bluesky", message_type="comment")["reason"]
        assert run(client, key, rule, "price?", platform="bluesky", message_type="mention")["matched"] is True


class TestReply:
    def test_variables_are_rendered(self, client, session, key, workspace):
        rule = make_rule(session, workspace, reply_text="Thanks {{author}}, see you on {{platform}}!")
        assert run(client, key, rule, "price", author="@sam")["reply"] == "Thanks @sam, see you on mastodon!"
        # no author: no gap
        assert run(client, key, rule, "price")["reply"] == "Thanks, see you on mastodon!"

    def test_built_in_and_own_templates(self, client, session, key, workspace):
        rule = make_rule(session, workspace, reply_text=None, reply_template_id="thanks")
        assert run(client, key, rule, "price", author="@sam")["reply"] == "Thank you @sam! We really appreciate it."
        own = make_template(session, workspace, name="Own", kind="reply", content="Ta {{platform}}",
                            variables=[{"name": "platform", "required": False, "default": None, "description": None}])
        mine = make_rule(session, workspace, name="Mine", reply_text=None, reply_template_id=str(own.id))
        assert run(client, key, mine, "price", platform="bluesky")["reply"] == "Ta bluesky"


class TestPriorities:
    def test_answered_by_and_every_enabled_verdict(self, client, session, key, workspace):
        catch_all = make_rule(session, workspace, name="Anything", priority=500, keywords=(), pattern=".")
        prices = make_rule(session, workspace, name="Prices", priority=10, keywords=("price",))
        support = make_rule(session, workspace, name="Support", priority=1, keywords=("broken",))
        disabled = make_rule(session, workspace, name="Off", priority=0, enabled=False, keywords=("price",))

        data = run(client, key, catch_all, "What is the price?")
        assert data["ruleId"] == str(catch_all.id) and data["matched"] is True
        assert data["answeredBy"] == str(prices.id)
        assert [e["ruleId"] for e in data["evaluations"]] == [str(support.id), str(prices.id), str(catch_all.id)]
        assert [e["matched"] for e in data["evaluations"]] == [False, True, True]

        off = run(client, key, disabled, "What is the price?")
        assert off["matched"] is True and off["answeredBy"] == str(prices.id)
        assert str(disabled.id) not in [e["ruleId"] for e in off["evaluations"]]

        nobody = run(client, key, prices, "Nice", platform="mastodon")
        assert nobody["answeredBy"] == str(catch_all.id)
        no_match = make_rule(session, workspace, name="Narrow", priority=2, keywords=("zzz",), enabled=False)
        catch_all.enabled = False
        session.commit()
        assert run(client, key, no_match, "Nice")["answeredBy"] is None


class TestNothingHappens:
    def test_no_call_and_no_record(self, client, session, key, workspace):
        make_account(session, workspace)
        rule = make_rule(session, workspace, keywords=("price",))
        run(client, key, rule, "price?", author="@sam")
        session.expire_all()
        assert session.execute(select(func.count()).select_from(SandboxCall)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(AutoReplyMessage)).scalar_one() == 0


class TestOncePerAuthor:
    def test_an_author_answered_within_the_window_does_not_match(self, client, session, key, workspace):
        account = make_account(session, workspace)
        rule = make_rule(session, workspace, frequency_mode="oncePerAuthor", window_hours=2)
        session.add(AutoReplyMessage(
            workspace_id=workspace.id, livemode=False, account_id=account.id, platform="twitter",
            external_id="m1", message_type="comment", author="@sam", author_id="42", text="price?",
            status="replied", rule_id=rule.id, replied_at=clock.now() - dt.timedelta(hours=1),
        ))
        session.commit()
        again = run(client, key, rule, "price?", author="@sam")
        assert again["matched"] is False and "already answered @sam" in again["reason"]
        assert again["answeredBy"] is None
        assert run(client, key, rule, "price?", author="@ana")["matched"] is True

    def test_missing_rule_is_404(self, client, key):
        response = client.post(f"/api/v1/auto-reply/rules/{uuid.uuid4()}/test", headers=key.headers,
                               json={"text": "x", "platform": "mastodon", "messageType": "dm"})
        assert response.status_code == 404
