"""The AI area through the generated client: the workspace's brand context, a
conversation with the assistant (drafts, a follow-up, reading it back) and the
insights into the workspace's posts."""
from __future__ import annotations

from uuid import UUID, uuid4

import pytest
from socialpub_client.api.ai import (
    get_brand_context,
    list_conversation_messages,
    list_conversations,
    list_insights,
    send_chat_message,
)
from socialpub_client.models.brand_context_response import BrandContextResponse
from socialpub_client.models.chat_reply_response import ChatReplyResponse
from socialpub_client.models.chat_request import ChatRequest
from socialpub_client.models.conversation_list import ConversationList
from socialpub_client.models.insight_period_input import InsightPeriodInput
from socialpub_client.models.insight_report_response import InsightReportResponse
from socialpub_client.models.message_list import MessageList
from socialpub_client.types import Unset

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow

LIMITS = {"twitter": 280, "linkedin": 3000}


def test_read_the_brand_context(sdk_server: SdkServer) -> None:
    context = expect(get_brand_context.sync_detailed(client=sdk_server.client()), 200, BrandContextResponse).data
    assert isinstance(context.voice, str) and isinstance(context.banned_words, list)
    # The brand context is a workspace:read record: a posts-only key may not read it.
    expect_error(
        get_brand_context.sync_detailed(client=sdk_server.client(sdk_server.keys.read_only)), 403, "insufficient_scope",
    )


def test_a_conversation_with_the_assistant(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    asked = ChatRequest(message="Write a post about our spring menu for Twitter and LinkedIn")
    first = expect(send_chat_message.sync_detailed(client=client, body=asked), 201, ChatReplyResponse).data
    assert first.message.role == "assistant" and first.message.content
    assert not isinstance(first.drafts, Unset)
    assert [draft.platform for draft in first.drafts] == ["twitter", "linkedin"]
    for draft in first.drafts:
        assert "spring menu" in draft.content and len(draft.content) <= LIMITS[draft.platform]

    follow_up = ChatRequest(message="Make them shorter", conversation_id=first.conversation_id)
    second = expect(send_chat_message.sync_detailed(client=client, body=follow_up), 200, ChatReplyResponse).data
    assert second.conversation_id == first.conversation_id

    messages = expect(
        list_conversation_messages.sync_detailed(first.conversation_id, client=client), 200, MessageList,
    )
    assert [message.role for message in messages.data] == ["user", "assistant", "user", "assistant"]
    assert messages.data[2].content == "Make them shorter" and messages.pagination.total_items == 4

    conversations = expect(list_conversations.sync_detailed(client=client, limit=100), 200, ConversationList).data
    assert UUID(str(first.conversation_id)) in [conversation.id for conversation in conversations]

    # A conversation that is not the workspace's is not found; an empty message is refused.
    unknown = ChatRequest(message="Hello", conversation_id=uuid4())
    expect_error(send_chat_message.sync_detailed(client=client, body=unknown), 404, "resource_not_found")
    expect_error(send_chat_message.sync_detailed(client=client, body=ChatRequest(message="")), 422, "validation_error")
    expect_error(list_conversation_messages.sync_detailed(uuid4(), client=client), 404, "resource_not_found")
    expect_error(
        list_conversations.sync_detailed(client=sdk_server.client(sdk_server.keys.read_only)), 403, "insufficient_scope",
    )


def test_insights_into_the_workspaces_posts(sdk_server: SdkServer) -> None:
    report = expect(
        list_insights.sync_detailed(client=sdk_server.client(), period=InsightPeriodInput("30d")), 200,
        InsightReportResponse,
    ).data
    assert report.minimum_sample == 5 and report.posts_analyzed >= report.posts_with_engagement_rate
    for insight in report.insights:
        assert insight.evidence.posts >= report.minimum_sample
    expect_error(
        list_insights.sync_detailed(client=sdk_server.client(sdk_server.keys.read_only)), 403, "insufficient_scope",
    )
