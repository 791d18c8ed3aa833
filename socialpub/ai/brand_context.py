"""The workspace's brand context: how its posts should sound, for whom, and what they
must never say. Edited in the dashboard, read by the API and the AI assistant.

One per workspace, shared by test and live mode: it describes the brand, not data a
test key could make. A workspace that has saved none reads as the empty default, so
callers never need to special-case "not set up yet".
"""
from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.ai import BrandContext
from persistence.workspaces import Workspace
from socialpub.errors import ApiError
from socialpub.tenancy import Actor, TenantScope

MAX_TEXT = 2000
MAX_BANNED_WORDS = 200
MAX_WORD_LENGTH = 100
MAX_HASHTAGS = 100
MAX_HASHTAG_LENGTH = 100
MAX_SAMPLE_POSTS = 20
MAX_SAMPLE_POST_LENGTH = 5000
HASHTAG_PATTERN = re.compile(r"^#?(\w+)$")


@dataclass(frozen=True)
class BrandContextView:
    """What readers get: the saved context, or the empty default (updated_at None)."""

    voice: str = ""
    audience: str = ""
    banned_words: list[str] = field(default_factory=list)
    hashtags: list[str] = field(default_factory=list)
    sample_posts: list[str] = field(default_factory=list)
    updated_at: dt.datetime | None = None


def _view(record: BrandContext | None) -> BrandContextView:
    if record is None:
        return BrandContextView()
    return BrandContextView(
        voice=record.voice, audience=record.audience, banned_words=list(record.banned_words),
        hashtags=list(record.hashtags), sample_posts=list(record.sample_posts), updated_at=record.updated_at,
    )


def _record(scope: TenantScope) -> BrandContext | None:
    return scope.session.execute(scope.select(BrandContext)).scalar_one_or_none()


def get_brand_context(*, session: Session, actor: Actor, workspace_id: uuid.UUID) -> BrandContextView:
    return _view(_record(TenantScope.workspace(session, workspace_id, actor=actor)))


def brand_context_of(*, session: Session, principal) -> BrandContextView:
    """What `GET /ai/brand-context` shows an API key: its workspace's brand context,
    one for both modes."""
    return get_brand_context(session=session, actor=Actor.key(principal), workspace_id=principal.workspace_id)


def _text(name: str, value: str | None) -> str:
    value = (value or "").strip()
    if len(value) > MAX_TEXT:
        raise ApiError.field_invalid(name, f"{name} may have at most {MAX_TEXT} characters.")
    return value


def _unique(items) -> list[str]:
    """In the order given, without blanks and repeats (case-insensitive)."""
    seen, kept = set(), []
    for item in items:
        item = item.strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            kept.append(item)
    return kept


def _within(items: list[str], name: str, *, most: int, longest: int, plural: str, singular: str,
            quoted: bool = False) -> list[str]:
    """`items`, unless there are more than `most` of them or one is longer than
    `longest` (quoted in the refusal where that helps find it)."""
    if len(items) > most:
        raise ApiError.field_invalid(name, f"At most {most} {plural}.")
    for item in items:
        if len(item) > longest:
            where = f": {item[:30]}..." if quoted else "."
            raise ApiError.field_invalid(name, f"A {singular} may have at most {longest} characters{where}")
    return items


def _banned_words(words) -> list[str]:
    return _within(
        _unique(words or []), "banned_words", most=MAX_BANNED_WORDS, longest=MAX_WORD_LENGTH,
        plural="banned words", singular="banned word", quoted=True,
    )


def _hashtags(tags) -> list[str]:
    tags = _unique(tags or [])
    if len(tags) > MAX_HASHTAGS:
        raise ApiError.field_invalid("hashtags", f"At most {MAX_HASHTAGS} hashtags.")
    normalized = []
    for tag in tags:
        match = HASHTAG_PATTERN.match(tag)
        if not match or len(tag) > MAX_HASHTAG_LENGTH:
            raise ApiError.field_invalid(
                "hashtags", f"{tag[:40]!r} is not a hashtag: letters, digits and underscores, optionally after #."
            )
        # Stored with the #, as they are written in a post.
        normalized.append("#" + match.group(1))
    return _unique(normalized)


def _sample_posts(posts) -> list[str]:
    return _within(
        [post.strip() for post in (posts or []) if post and post.strip()], "sample_posts",
        most=MAX_SAMPLE_POSTS, longest=MAX_SAMPLE_POST_LENGTH, plural="sample posts", singular="sample post",
    )


def save_brand_context(
    *, session: Session, actor: Actor, workspace_id: uuid.UUID, voice: str = "", audience: str = "",
    banned_words=(), hashtags=(), sample_posts=(),
) -> BrandContextView:
    """Replaces the whole context (it is edited as one document). Checks everything
    before writing anything."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    values = dict(
        voice=_text("voice", voice), audience=_text("audience", audience), banned_words=_banned_words(banned_words),
        hashtags=_hashtags(hashtags), sample_posts=_sample_posts(sample_posts),
    )
    record = _record(scope)
    if record is None:
        # Not a tenant record of one mode (scope.add names a mode): the workspace's own.
        record = BrandContext(workspace_id=scope.workspace_id, **values)
        session.add(record)
    else:
        for name, value in values.items():
            setattr(record, name, value)
    try:
        session.commit()
    except IntegrityError:
        # Two first saves at once: the other one made the row; this one updates it.
        session.rollback()
        record = _record(scope)
        for name, value in values.items():
            setattr(record, name, value)
        session.commit()
    return _view(record)
