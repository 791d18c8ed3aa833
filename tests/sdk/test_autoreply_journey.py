"""Auto-reply through the generated client: reply templates listed, rules created
(one refused for a pattern RE2 cannot compile), tested against samples with
priorities, updated, listed and deleted."""
from __future__ import annotations

import pytest
from socialpub_client.api.autoreply import (
    create_auto_reply_rule,
    delete_auto_reply_rule,
    list_auto_reply_rules,
    list_reply_templates,
    test_auto_reply_rule as run_rule_test,
    update_auto_reply_rule,
)
from socialpub_client.models.auto_reply_rule_create import AutoReplyRuleCreate
from socialpub_client.models.auto_reply_rule_list import AutoReplyRuleList
from socialpub_client.models.auto_reply_rule_response import AutoReplyRuleResponse
from socialpub_client.models.auto_reply_rule_update import AutoReplyRuleUpdate
from socialpub_client.models.auto_reply_test_request import AutoReplyTestRequest
from socialpub_client.models.auto_reply_test_response import AutoReplyTestResponse
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.frequency_input import FrequencyInput
from socialpub_client.models.frequency_mode_input import FrequencyModeInput
from socialpub_client.models.match_mode_input import MatchModeInput
from socialpub_client.models.message_type_input import MessageTypeInput
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.reply_input import ReplyInput
from socialpub_client.models.reply_template_list import ReplyTemplateList
from socialpub_client.models.trigger_input import TriggerInput

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def test_rules_from_templates_to_tests(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    templates = expect(list_reply_templates.sync_detailed(client=client), 200, ReplyTemplateList)
    assert [t.id for t in templates.data[:3]] == ["thanks", "support_handoff", "out_of_hours"]

    prices = expect(
        create_auto_reply_rule.sync_detailed(client=client, body=AutoReplyRuleCreate(
            name="Journey prices", priority=10, platforms=[PlatformInput.MASTODON],
            trigger=TriggerInput(keywords=["price", "how much"], match=MatchModeInput.ANY, exclude_keywords=["refund"]),
            reply=ReplyInput(text="Thanks {{author}}! Prices are at socialpub.dev/prices"),
            frequency=FrequencyInput(mode=FrequencyModeInput.ONCEPERAUTHOR, window_hours=12),
        )),
        201, AutoReplyRuleResponse,
    ).data
    assert prices.frequency.window_hours == 12 and prices.enabled is True
    support = expect(
        create_auto_reply_rule.sync_detailed(client=client, body=AutoReplyRuleCreate(
            name="Journey support", priority=20,
            trigger=TriggerInput(pattern="(?i)order\\s*#?\\d+"), reply=ReplyInput(template_id="support_handoff"),
        )),
        201, AutoReplyRuleResponse,
    ).data
    refused = create_auto_reply_rule.sync_detailed(client=client, body=AutoReplyRuleCreate(
        name="Journey broken", trigger=TriggerInput(pattern="(a)\\1"), reply=ReplyInput(template_id="thanks"),
    ))
    expect_error(refused, 422, "validation_error")

    sample = AutoReplyTestRequest(text="How much is order #123?", platform=PlatformInput.MASTODON,
                                  message_type=MessageTypeInput.COMMENT, author="@sam")
    tested = expect(run_rule_test.sync_detailed(support.id, client=client, body=sample), 200, AutoReplyTestResponse).data
    assert tested.matched is True and tested.answered_by == prices.id
    assert tested.reply is not None and tested.reply.startswith("Sorry to hear that @sam.")
    verdicts = {e.rule_id: e.matched for e in tested.evaluations}
    assert verdicts[prices.id] is True and verdicts[support.id] is True

    # Disabled, the price rule still tests, and no longer answers.
    disabled = expect(
        update_auto_reply_rule.sync_detailed(prices.id, client=client, body=AutoReplyRuleUpdate(enabled=False)),
        200, AutoReplyRuleResponse,
    ).data
    assert disabled.enabled is False
    again = expect(run_rule_test.sync_detailed(prices.id, client=client, body=sample), 200, AutoReplyTestResponse).data
    assert again.matched is True and again.answered_by == support.id
    assert again.reply == "Thanks @sam! Prices are at socialpub.dev/prices"

    listed = expect(list_auto_reply_rules.sync_detailed(client=client, limit=100), 200, AutoReplyRuleList)
    ours = [rule.id for rule in listed.data if rule.id in (prices.id, support.id)]
    assert ours == [prices.id, support.id]

    for rule in (prices, support):
        assert expect(delete_auto_reply_rule.sync_detailed(rule.id, client=client), 200, DeletedResponse).data.id == rule.id
    expect_error(run_rule_test.sync_detailed(prices.id, client=client, body=sample), 404, "resource_not_found")
