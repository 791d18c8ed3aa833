"""What the AI assistant announces about its conversations (socialpub.announcements),
once per change, in its transaction.

| kind | when |
|---|---|
| created | a conversation starts (its first message and the reply are saved) |
| updated | a message and its reply are added to it |
| deleted | it is removed (announced before it goes) |

Subscribers read the conversation as it is after the change (`change.record`), its
messages in the session (flushed by the writer before it announces: a subscriber
never flushes); search keeps its `conversations` index by them.
"""
from __future__ import annotations

from socialpub.announcements import Topic

CONVERSATIONS = Topic("conversation", kinds=("created", "updated", "deleted"))
