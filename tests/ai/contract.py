"""The AI area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.ai import Conversation, ConversationMessage
from tests.ai.factories import make_conversation
from tests.support.contract import RecordFactory


def _conversation(session, workspace, livemode):
    return make_conversation(session, workspace, livemode=livemode).id


def _find_untouched_conversation(session, conversation_id):
    # A refused request must neither remove the conversation nor add to it.
    messages = session.execute(
        select(func.count()).select_from(ConversationMessage).where(ConversationMessage.conversation_id == conversation_id)
    ).scalar_one()
    conversation = session.get(Conversation, conversation_id)
    return conversation if conversation is not None and messages == 2 else None


RECORD_FACTORIES = {
    "conversationId": RecordFactory(make=_conversation, find=_find_untouched_conversation),
}
