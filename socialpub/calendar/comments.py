"""Comments on a post or on a calendar date, by the key that wrote them, with the
@names they mention."""
from __future__ import annotations

import datetime as dt
import re
import uuid

from sqlalchemy.orm import Session

from persistence.calendar import CalendarComment
from persistence.posts import Post
from socialpub.calendar.activity import record_activity
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope

MAX_BODY = 2000
MAX_MENTIONS = 50
# An @name not glued to a word before it (so an e-mail address mentions nobody); a
# trailing dot or dash ends the sentence, not the name.
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])?)")


def mentions_in(body: str) -> list[str]:
    found: list[str] = []
    for name in _MENTION.findall(body):
        if name not in found:
            found.append(name)
    return found[:MAX_MENTIONS]


def _parse_date(value, name: str) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ApiError.field_invalid(name, f"{name} must be a date as YYYY-MM-DD.") from None


def create_comment(
    *, session: Session, principal: Principal, body: str, post_id=None, date=None,
) -> CalendarComment:
    scope = TenantScope.of(session, principal)
    if (post_id is None) == (date is None):
        raise ApiError.field_invalid("post_id", "Give either postId or date: a comment is on a post or on a date.")
    if body is None or not body.strip() or len(body) > MAX_BODY:
        raise ApiError.field_invalid("body", f"body must be 1 to {MAX_BODY} characters, not only spaces.")
    post = scope.get(Post, post_id, resource="post") if post_id is not None else None
    comment = scope.add(CalendarComment(
        id=uuid.uuid4(), post_id=post.id if post else None, date=_parse_date(date, "date"), body=body,
        author=scope.actor.name, mentions=mentions_in(body),
    ))
    record_activity(
        session, workspace_id=scope.workspace_id, livemode=scope.livemode, type="comment.added",
        subject_type="comment", subject_id=comment.id, post_id=comment.post_id, summary=body, actor=comment.author,
        scheduled_at=post.scheduled_at if post else None,
    )
    session.commit()
    return comment


def list_comments(
    *, session: Session, principal: Principal, post_id=None, since=None, until=None, limit: int = 20, offset: int = 0,
) -> Page:
    """A post's comments, or the dates' comments from `since` to `until` (both
    inclusive, either open), or every comment; newest first."""
    scope = TenantScope.of(session, principal)
    since, until = _parse_date(since, "query.from"), _parse_date(until, "query.to")
    criteria = []
    if post_id is not None:
        if since is not None or until is not None:
            raise ApiError.field_invalid("query.postId", "List by postId or by from/to, not both.")
        post = scope.get(Post, post_id, resource="post")
        criteria.append(CalendarComment.post_id == post.id)
    elif since is not None or until is not None:
        if since is not None and until is not None and until < since:
            raise ApiError.field_invalid("query.to", "to must not be before from.")
        criteria.append(CalendarComment.date.is_not(None))
        if since is not None:
            criteria.append(CalendarComment.date >= since)
        if until is not None:
            criteria.append(CalendarComment.date <= until)
    query = scope.select(CalendarComment, *criteria).order_by(
        CalendarComment.created_at.desc(), CalendarComment.id.desc()
    )
    return paginate(session, query, total=scope.count_query(CalendarComment, *criteria), limit=limit, offset=offset)
