"""POST /ai/chat with the built-in composer, and reading conversations back."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from persistence.accounts import ConnectedAccount
from persistence.ai import Conversation, ConversationMessage
from tests.ai.factories import make_conversation
from tests.support.factories import make_key, make_post, make_workspace

CHAT = "/api/v1/ai/chat"
CONVERSATIONS = "/api/v1/ai/conversations"


def count(session, model) -> int:
    return session.execute(select(func.count()).select_from(model)).scalar_one()


def chat(client, key, message, conversation_id=None):
    body = {"message": message}
    if conversation_id:
        body["conversationId"] = conversation_id
    return client.post(CHAT, headers=key.headers, json=body)


class TestSendMessage:
    def test_a_new_conversation_answers_with_its_location(self, client, key, brand):
        response = chat(client, key, "Write a post about our oat latte for Twitter and LinkedIn")
        assert response.status_code == 201, response.json()
        data = response.json()["data"]
        assert response.headers["Location"] == f"/api/v1/ai/conversations/{data['conversationId']}/messages"
        assert data["message"]["role"] == "assistant"
        assert [draft["platform"] for draft in data["drafts"]] == ["twitter", "linkedin"]
        assert data["message"]["drafts"] == data["drafts"]

    def test_continuing_keeps_every_message_in_order(self, client, key, brand):
        first = chat(client, key, "Write a post about our Berlin pop-up for Bluesky").json()["data"]
        conversation_id = first["conversationId"]
        second = chat(client, key, "Make it shorter", conversation_id)
        assert second.status_code == 200
        assert second.headers["Location"] == f"/api/v1/ai/conversations/{conversation_id}/messages"
        assert second.json()["data"]["conversationId"] == conversation_id
        assert "Berlin pop-up" in second.json()["data"]["drafts"][0]["content"]
        messages = client.get(f"{CONVERSATIONS}/{conversation_id}/messages", headers=key.headers).json()
        assert [(m["role"], m["content"][:20]) for m in messages["data"]] == [
            ("user", "Write a post about o"),
            ("assistant", first["message"]["content"][:20]),
            ("user", "Make it shorter"),
            ("assistant", second.json()["data"]["message"]["content"][:20]),
        ]
        assert "drafts" not in messages["data"][0] and messages["data"][1]["drafts"] == first["drafts"]
        assert messages["data"][3]["id"] == second.json()["data"]["message"]["id"]

    def test_without_platforms_named_it_drafts_for_the_accounts_connected(self, client, key, session, workspace):
        # Not the sandbox accounts every test mode has, nor another mode's or a disabled account.
        for platform, status, livemode in [("mastodon", "active", False), ("instagram", "active", False),
                                           ("facebook", "disabled", False), ("tiktok", "active", True)]:
            session.add(ConnectedAccount(workspace_id=workspace.id, livemode=livemode, platform=platform,
                                         connector="mastodon", handle="@brand", status=status, options={}))
            session.commit()
        data = chat(client, key, "Write a post about our oat latte").json()["data"]
        assert sorted(draft["platform"] for draft in data["drafts"]) == ["instagram", "mastodon"]

    def test_without_platforms_named_it_drafts_where_the_workspace_posts_most(self, client, key, session, workspace):
        for platforms in [["bluesky", "threads"], ["bluesky"], ["threads", "linkedin"], ["bluesky", "discord"]]:
            make_post(session, workspace, platforms=platforms)
        make_post(session, workspace, livemode=True, platforms=["telegram"])
        data = chat(client, key, "Write a post about our oat latte").json()["data"]
        assert [draft["platform"] for draft in data["drafts"]] == ["bluesky", "threads", "discord"]

    def test_with_nothing_to_go_by_it_drafts_for_x_and_linkedin(self, client, key):
        data = chat(client, key, "Write a post about our oat latte").json()["data"]
        assert [draft["platform"] for draft in data["drafts"]] == ["twitter", "linkedin"]

    def test_a_reply_without_drafts_has_no_drafts_field(self, client, key, brand):
        data = chat(client, key, "What is our brand voice?").json()["data"]
        assert "drafts" not in data and "drafts" not in data["message"]
        assert "Warm, playful" in data["message"]["content"]

    @pytest.mark.parametrize("message", ["", "x" * 4001])
    def test_message_length_is_1_to_4000(self, client, key, session, message):
        response = chat(client, key, message)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "validation_error"
        assert count(session, Conversation) == 0

    def test_a_blank_message_is_refused(self, client, key, session):
        response = chat(client, key, "   \n ")
        assert response.status_code == 422 and response.json()["error"]["details"][0]["field"] == "message"
        assert count(session, ConversationMessage) == 0

    def test_4000_characters_are_accepted(self, client, key):
        assert chat(client, key, "a" * 4000).status_code == 201

    def test_unknown_fields_are_refused(self, client, key):
        response = client.post(CHAT, headers=key.headers, json={"message": "hi", "model": "gpt-5"})
        assert response.status_code == 422

    def test_an_unknown_conversation_is_404_and_saves_nothing(self, client, key, session):
        response = chat(client, key, "hello", str(uuid.uuid4()))
        assert response.status_code == 404 and response.json()["error"]["code"] == "resource_not_found"
        assert count(session, ConversationMessage) == 0

    def test_another_workspace_or_mode_cannot_continue_a_conversation(self, client, key, live_key, session, workspace):
        other = make_conversation(session, make_workspace(session, name="Other"))
        live = make_conversation(session, workspace, livemode=True)
        assert chat(client, key, "hello", str(other.id)).status_code == 404
        assert chat(client, key, "hello", str(live.id)).status_code == 404
        assert chat(client, live_key, "hello", str(live.id)).status_code == 200
        assert count(session, ConversationMessage) == 6

    def test_the_scope_is_conversations_write(self, client, session, workspace):
        reader = make_key(session, workspace, scopes=["conversations:read"])
        response = chat(client, reader, "hello")
        assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"

    def test_conversations_are_titled_by_their_first_message(self, client, key, session):
        chat(client, key, "  Ideas   for our\nspring menu  ")
        chat(client, key, "word " * 50)
        titles = [c.title for c in session.execute(select(Conversation).order_by(Conversation.created_at)).scalars()]
        assert titles[0] == "Ideas for our spring menu"
        assert len(titles[1]) == 80 and titles[1].endswith("…")


class TestListConversations:
    def test_newest_first_paginated_in_the_keys_workspace_and_mode(self, client, key, session, workspace):
        base = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
        made = [make_conversation(session, workspace, title=f"c{i}", created_at=base + dt.timedelta(hours=i)) for i in range(3)]
        make_conversation(session, workspace, livemode=True)
        make_conversation(session, make_workspace(session, name="Other"))
        first = client.get(CONVERSATIONS, headers=key.headers, params={"limit": 2}).json()
        assert [c["title"] for c in first["data"]] == ["c2", "c1"]
        assert first["pagination"] == {"totalItems": 3, "totalPages": 2, "hasNextPage": True, "limit": 2, "offset": 0}
        rest = client.get(CONVERSATIONS, headers=key.headers, params={"limit": 2, "offset": 2}).json()
        assert [c["id"] for c in rest["data"]] == [str(made[0].id)]
        assert rest["data"][0]["livemode"] is False and rest["data"][0]["lastMessageAt"] == "2026-11-01T00:00:00.000Z"

    def test_an_empty_list(self, client, key):
        body = client.get(CONVERSATIONS, headers=key.headers).json()
        assert body["data"] == [] and body["pagination"]["totalItems"] == 0


class TestListMessages:
    def test_oldest_first_paginated(self, client, key):
        conversation_id = chat(client, key, "Write a tweet about our oat latte").json()["data"]["conversationId"]
        for text in ["Make it shorter", "Write a longer one"]:
            chat(client, key, text, conversation_id)
        url = f"{CONVERSATIONS}/{conversation_id}/messages"
        page = client.get(url, headers=key.headers, params={"limit": 4, "offset": 2}).json()
        assert [m["role"] for m in page["data"]] == ["user", "assistant", "user", "assistant"]
        assert page["data"][0]["content"] == "Make it shorter"
        assert page["pagination"]["totalItems"] == 6 and page["pagination"]["hasNextPage"] is False

    def test_another_workspaces_or_modes_conversation_is_404(self, client, key, session, workspace):
        other = make_conversation(session, make_workspace(session, name="Other"))
        live = make_conversation(session, workspace, livemode=True)
        for conversation in (other, live):
            response = client.get(f"{CONVERSATIONS}/{conversation.id}/messages", headers=key.headers)
            assert response.status_code == 404
        assert client.get(f"{CONVERSATIONS}/not-a-uuid/messages", headers=key.headers).status_code == 404
