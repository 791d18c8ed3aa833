"""Records of the AI area for its tests and the contract tests."""
from __future__ import annotations

import datetime as dt

from persistence.ai import Conversation, ConversationMessage
from socialpub import clock
from socialpub.ai import brand_context
from tests.support.factories import OPERATOR


def make_conversation(session, workspace, *, livemode: bool = False, title: str = "Ideas for spring",
                      created_at: dt.datetime | None = None) -> Conversation:
    """A conversation of one exchange: a question and the assistant's answer."""
    when = created_at or clock.now()
    conversation = Conversation(
        workspace_id=workspace.id, livemode=livemode, title=title, last_message_at=when, created_at=when, updated_at=when,
    )
    session.add(conversation)
    session.flush()
    for position, (role, content) in enumerate([("user", title), ("assistant", f"Some thoughts on {title.lower()}.")]):
        session.add(ConversationMessage(
            workspace_id=workspace.id, livemode=livemode, conversation_id=conversation.id, position=position,
            role=role, content=content, created_at=when, updated_at=when,
        ))
    session.commit()
    return conversation


def save_brand(session, workspace, **fields) -> None:
    brand_context.save_brand_context(session=session, actor=OPERATOR, workspace_id=workspace.id, **fields)
