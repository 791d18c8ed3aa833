"""POST /ai/chat through a configured OpenAI-compatible model (a local server, see
tests/support/llm_server.py): what it is sent, how its drafts are read, the brand's
rules on its replies, and what its failures leave behind (nothing)."""
from __future__ import annotations

import socket
import uuid

import pytest
from sqlalchemy import func, select

from persistence.ai import Conversation, ConversationMessage
from tests.ai.conftest import model_settings
from tests.support.llm_server import MODEL, Answer

CHAT = "/api/v1/ai/chat"


@pytest.fixture
def settings(database_url, test_redis_url, llm):
    return model_settings(database_url, test_redis_url, llm)


def count(session, model) -> int:
    return session.execute(select(func.count()).select_from(model)).scalar_one()


def chat(client, key, message, conversation_id=None):
    body = {"message": message}
    if conversation_id:
        body["conversationId"] = conversation_id
    return client.post(CHAT, headers=key.headers, json=body)


class TestRequests:
    def test_the_model_gets_the_brand_context_and_its_reply_is_kept(self, client, key, brand, llm, session):
        llm.script("Good morning! How can I help with your coffee posts?")
        response = chat(client, key, "Hello")
        assert response.status_code == 201, response.json()
        assert response.json()["data"]["message"]["content"] == "Good morning! How can I help with your coffee posts?"
        [request] = llm.requests
        assert request.body["model"] == MODEL and llm.refusals == []
        system = request.system
        for expected in [brand["voice"], brand["audience"], "#coffee #oatmilk #smallbusiness", "cheap, synergy",
                         brand["sample_posts"][0], "<draft platform="]:
            assert expected in system
        assert request.messages[1:] == [{"role": "user", "content": "Hello"}]
        assert count(session, ConversationMessage) == 2

    def test_the_conversation_so_far_is_sent_in_order(self, client, key, llm):
        llm.script("First answer.")
        conversation_id = chat(client, key, "First question").json()["data"]["conversationId"]
        llm.script('Here you go.\n<draft platform="twitter">Oat latte, now.</draft>')
        chat(client, key, "Now a tweet about it", conversation_id)
        llm.script("Third answer.")
        assert chat(client, key, "Thanks", conversation_id).status_code == 200
        assert [(m["role"], m["content"]) for m in llm.requests[-1].messages[1:]] == [
            ("user", "First question"),
            ("assistant", "First answer."),
            ("user", "Now a tweet about it"),
            ("assistant", 'Here you go.\n\n<draft platform="twitter">Oat latte, now.</draft>'),
            ("user", "Thanks"),
        ]

    def test_drafts_are_read_out_of_the_reply(self, client, key, llm):
        llm.script(
            "Two drafts:\n<draft platform=\"twitter\">Oat latte season ☕ #coffee</draft>\n"
            "<draft platform='LinkedIn'>Our oat latte is here.</draft>"
        )
        data = chat(client, key, "Write about our oat latte for Twitter and LinkedIn").json()["data"]
        assert data["message"]["content"] == "Two drafts:"
        assert data["drafts"] == [
            {"platform": "twitter", "content": "Oat latte season ☕ #coffee"},
            {"platform": "linkedin", "content": "Our oat latte is here."},
        ]
        assert "twitter 280 weighted characters" in llm.requests[0].system and "linkedin 3000" in llm.requests[0].system


class TestBrandRules:
    def test_a_banned_word_gets_one_more_try_naming_it(self, client, key, brand, llm, session):
        llm.script("It's cheap and cheerful!", "It's affordable and cheerful!")
        response = chat(client, key, "Describe our prices")
        assert response.status_code == 201
        assert response.json()["data"]["message"]["content"] == "It's affordable and cheerful!"
        retry = llm.requests[1].messages
        assert retry[-2] == {"role": "assistant", "content": "It's cheap and cheerful!"}
        assert retry[-1]["role"] == "user" and "banned word 'cheap'" in retry[-1]["content"]
        stored = session.execute(select(ConversationMessage.content).order_by(ConversationMessage.position)).scalars()
        assert list(stored) == ["Describe our prices", "It's affordable and cheerful!"]

    def test_accents_and_case_do_not_hide_a_banned_word(self, client, key, brand, llm):
        llm.script("Try our CAFE AU LAIT", "Try our latte")
        assert chat(client, key, "What should we promote?").json()["data"]["message"]["content"] == "Try our latte"
        assert "'Café au lait'" in llm.requests[1].messages[-1]["content"]

    def test_a_second_violation_is_refused_and_nothing_is_saved(self, client, key, brand, llm, session):
        llm.script("Cheap!", '<draft platform="twitter">So much synergy</draft>')
        response = chat(client, key, "Describe our prices")
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "brand_rule_violation"
        assert error["details"] == [
            {"field": "drafts[0].content", "message": "The twitter draft uses the banned word 'synergy'."}
        ]
        assert len(llm.requests) == 2
        assert count(session, Conversation) == 0 and count(session, ConversationMessage) == 0

    def test_a_refusal_in_a_conversation_leaves_it_as_it_was(self, client, key, brand, llm, session):
        llm.script("Hello.")
        conversation_id = chat(client, key, "Hi").json()["data"]["conversationId"]
        llm.script("cheap", "cheap")
        assert chat(client, key, "Prices?", conversation_id).status_code == 422
        assert count(session, ConversationMessage) == 2

    def test_a_draft_over_its_limit_is_retried(self, client, key, llm):
        llm.script(f'<draft platform="twitter">{"x" * 281}</draft>', '<draft platform="twitter">Short one</draft>')
        data = chat(client, key, "A tweet please").json()["data"]
        assert data["drafts"] == [{"platform": "twitter", "content": "Short one"}]
        assert "281 weighted characters; twitter allows at most 280" in llm.requests[1].messages[-1]["content"]


class TestModelFailures:
    @pytest.mark.parametrize("answer", [
        Answer(status=500, content="overloaded"),
        Answer(status=503, content="try later"),
        Answer(status=401, content="bad key"),
        Answer(raw=b"<html>gateway</html>"),
        Answer(raw=b'{"choices": []}'),
        Answer(raw=b'{"choices": [{"message": {"content": null}}]}'),
    ], ids=["500", "503", "401", "not-json", "no-choices", "no-content"])
    def test_503_with_retry_after_and_nothing_saved(self, client, key, llm, session, answer):
        llm.script(answer)
        response = chat(client, key, "Hello")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "service_unavailable"
        assert int(response.headers["Retry-After"]) >= 1
        assert count(session, Conversation) == 0 and count(session, ConversationMessage) == 0

    def test_the_models_retry_after_is_passed_on(self, client, key, llm):
        llm.script(Answer(status=429, content="slow down", headers={"Retry-After": "42"}))
        response = chat(client, key, "Hello")
        assert response.status_code == 503 and response.headers["Retry-After"] == "42"

    def test_a_failure_in_a_conversation_keeps_neither_message(self, client, key, llm, session):
        llm.script("Hello.")
        conversation_id = chat(client, key, "Hi").json()["data"]["conversationId"]
        llm.script(Answer(status=502, content="bad gateway"))
        assert chat(client, key, "And now?", conversation_id).status_code == 503
        assert count(session, ConversationMessage) == 2

    def test_a_failure_on_the_retry_is_a_503_too(self, client, key, brand, llm, session):
        llm.script("cheap", Answer(status=500))
        assert chat(client, key, "Hello").status_code == 503
        assert count(session, ConversationMessage) == 0


class TestUnreachableModel:
    @pytest.fixture
    def settings(self, database_url, test_redis_url, llm):
        # A port nobody listens on: the connection is refused.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return model_settings(database_url, test_redis_url, llm, ai_base_url=f"http://127.0.0.1:{port}/v1")

    def test_connection_refused_is_503(self, client, key, session):
        response = chat(client, key, "Hello")
        assert response.status_code == 503 and "Retry-After" in response.headers
        assert count(session, ConversationMessage) == 0


class TestPrivateAddressesNeedAllowing:
    def test_the_outbound_guard_refuses_a_private_model_address_not_allowed(self, client, key, llm, session, monkeypatch):
        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS")
        response = chat(client, key, "Hello")
        assert response.status_code == 503
        assert llm.requests == [] and count(session, ConversationMessage) == 0


class TestSlowModel:
    @pytest.fixture
    def settings(self, database_url, test_redis_url, llm):
        return model_settings(database_url, test_redis_url, llm, ai_timeout_seconds=0.2)

    def test_a_model_slower_than_the_timeout_is_503(self, client, key, llm, session):
        llm.script(Answer(content="Too late.", delay=0.6))
        response = chat(client, key, "Hello")
        assert response.status_code == 503 and response.json()["error"]["code"] == "service_unavailable"
        assert count(session, ConversationMessage) == 0


class TestIdempotentRetries:
    def test_a_retried_message_replays_the_first_reply_without_asking_again(self, client, key, llm, session):
        llm.script("The first answer.", "A second answer.")
        headers = {**key.headers, "Idempotency-Key": "chat-retry-1"}
        first = client.post(CHAT, headers=headers, json={"message": "Hello"})
        again = client.post(CHAT, headers=headers, json={"message": "Hello"})
        assert first.status_code == again.status_code == 201
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()
        assert len(llm.requests) == 1 and count(session, ConversationMessage) == 2


class TestUnstorableText:
    def test_nul_and_lone_surrogates_in_a_reply_are_not_stored(self, client, key, llm, session):
        llm.script(Answer(raw=b'{"choices": [{"message": {"role": "assistant", "content": "Hi\\u0000 there \\ud800!"}}]}'))
        response = chat(client, key, "Hello")
        assert response.status_code == 201
        assert response.json()["data"]["message"]["content"] == "Hi there ?!"


class TestConcurrentReplies:
    def test_a_reply_that_lost_the_race_is_409_and_saves_nothing(self, client, key, llm, session, db):
        llm.script("First.")
        conversation_id = chat(client, key, "Hi").json()["data"]["conversationId"]

        def another_reply_lands_first(_request):
            other = db.sessionmaker()
            conversation = other.get(Conversation, uuid.UUID(conversation_id))
            for position, role in [(2, "user"), (3, "assistant")]:
                other.add(ConversationMessage(
                    workspace_id=conversation.workspace_id, livemode=False, conversation_id=conversation.id,
                    position=position, role=role, content=f"from elsewhere ({role})",
                ))
            other.commit()
            other.close()

        llm.script("Second.")
        llm.meanwhile = another_reply_lands_first
        response = chat(client, key, "And again", conversation_id)
        assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
        contents = session.execute(
            select(ConversationMessage.content).order_by(ConversationMessage.position)
        ).scalars().all()
        assert contents == ["Hi", "First.", "from elsewhere (user)", "from elsewhere (assistant)"]
