"""`socialpub conversation list|show`: a workspace's AI assistant conversations; `show`
gives a conversation with its first 100 messages."""
from __future__ import annotations

from persistence.ai import Conversation
from socialpub.ai import service
from socialpub.ai.schemas import ConversationSchema, MessageSchema
from socialpub.cli.records import Noun, paged, scoped_get

conversation_schema, message_schema = ConversationSchema(), MessageSchema()


def show(*, scope, record_id) -> dict:
    conversation = scoped_get(Conversation, "conversation")(scope=scope, record_id=record_id)
    messages = service.list_messages.in_scope(scope, conversation_id=conversation.id, limit=100)
    return {**conversation_schema.dump(conversation), "messages": message_schema.dump(messages.items, many=True)}


NOUN = Noun(
    name="conversation", help="AI assistant conversations", model=Conversation, resource="conversation",
    list_records=paged(service.list_conversations), show_record=show, dump=conversation_schema.dump,
    columns=("id", "livemode", "title", "lastMessageAt", "createdAt"),
)
register = NOUN.register
