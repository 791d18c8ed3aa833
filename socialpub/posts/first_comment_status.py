"""A first comment's status, read from its post's targets: a pure function, so the
post schema and the publishing pipeline share it without importing each other."""
from __future__ import annotations

from socialpub.platforms import supports_replies

COMMENT_POSTED, COMMENT_FAILED = "posted", "failed"


def first_comment_status(comment) -> str:
    states = [t.comment_status for t in comment.post.targets if t.comment_status]
    if COMMENT_FAILED in states:
        return "failed"
    replying = [t for t in comment.post.targets if supports_replies(t.platform)]
    if replying and all(t.comment_status == COMMENT_POSTED for t in replying):
        return "posted"
    return "pending"
