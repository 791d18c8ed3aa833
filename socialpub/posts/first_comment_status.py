"""A first comment's status, read from its post's targets: a pure function, so the
post schema and the publishing pipeline share it without importing each other."""
from __future__ import annotations

from persistence.posts import CommentStatus
from socialpub.platforms import supports_replies


def first_comment_status(comment) -> str:
    states = [t.comment_status for t in comment.post.targets if t.comment_status]
    if CommentStatus.FAILED in states:
        return CommentStatus.FAILED
    replying = [t for t in comment.post.targets if supports_replies(t.platform)]
    if replying and all(t.comment_status == CommentStatus.POSTED for t in replying):
        return CommentStatus.POSTED
    return CommentStatus.PENDING
