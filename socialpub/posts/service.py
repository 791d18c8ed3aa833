"""Posts: drafts and scheduled posts, their rules and state changes.

`add_post` is the one way to create a post, for the API and for every other area
(RSS items, templates, calendar reservations): the rules of `POST /posts` are checked
once, the post is added (and made due, for "publish now") in the caller's
transaction, and the change is announced (`socialpub.posts.changes.POSTS`), so the
outbox, the calendar's activity and whatever else subscribes record it in that same
transaction. Every other change of a post is announced the same way by the service
below that makes it.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

from sqlalchemy.orm import Session

from persistence.posts import Post, PostStatus, TargetStatus
from persistence.types import utcnow
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.posts.changes import POSTS
from socialpub.posts import rows
from socialpub.posts.counters import total_query
from socialpub.posts.rules import check_content, check_platforms, check_publishable, check_schedule
from socialpub.posts.targets import guard_editable, sync_targets
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope, scoped

UNSET = object()


@scoped
def list_posts(
    scope: TenantScope,
    *,
    status: str | None = None,
    include_archived: bool = False,
    limit: int = 20,
    offset: int = 0,
) -> Page:
    session = scope.session
    criteria = status_filter(Post.status, status, PostStatus)
    if not include_archived:
        criteria.append(Post.archived_at.is_(None))
    newest_first = (Post.created_at.desc(), Post.id.desc())
    query = scope.select(Post, *criteria).order_by(*newest_first)
    # The page's ids come from the indexes that hold the list's order and the id
    # (ix_posts_tenant_visible, ix_posts_tenant_status, ix_posts_tenant_created);
    # its posts are read as rows (socialpub.posts.rows), not models.
    total = total_query(scope, status=status, include_archived=include_archived)
    page = paginate(session, query, total=total, limit=limit, offset=offset, rows=rows.page_statement)
    return dataclasses.replace(page, items=rows.records(scope, page.items))


def create_post(
    *,
    session: Session,
    principal: Principal,
    content: str,
    platforms,
    scheduled_at: dt.datetime | None = None,
) -> Post:
    post = add_post(TenantScope.of(session, principal), content=content, platforms=platforms, scheduled_at=scheduled_at)
    session.commit()
    return post


def add_post(
    scope: TenantScope, *, content: str, platforms, scheduled_at: dt.datetime | None = None, publish_now: bool = False,
) -> Post:
    """A new post under the rules of POST /posts, in the caller's transaction (the
    caller commits): a draft, scheduled at `scheduled_at`, or with `publish_now` due at
    once, as `POST /posts/{postId}/publish` makes a post. Raises before adding anything
    when a rule refuses it. The post has its id from the start, so a caller links its
    own record to it (`item.post_id = post.id`) in the same transaction."""
    if publish_now and scheduled_at is not None:
        raise ValueError("a post is either published now or scheduled, not both")
    platforms = check_platforms(platforms)
    content = check_content(content, platforms)
    if publish_now:
        check_publishable(scope, content, platforms)
        scheduled_at = utcnow()
    elif scheduled_at is not None:
        check_schedule(scope, scheduled_at, platforms)
    post = scope.add(
        Post(
            # Its id now, not at flush: what records the new post in this transaction
            # (the calendar's activity, events) names it without a flush of its own.
            id=uuid.uuid4(),
            content=content,
            platforms=platforms,
            status=PostStatus.SCHEDULED if scheduled_at is not None else PostStatus.DRAFT,
            scheduled_at=scheduled_at,
            # Known to be empty: set, so showing the new post reads nothing back.
            targets=[],
            first_comment=None,
        )
    )
    if post.status == PostStatus.SCHEDULED:
        sync_targets(scope, post)
    POSTS.announce("created", scope=scope, record=post)
    return post


@scoped
def get_post(scope: TenantScope, *, post_id):
    """The post, read as a record (posts.rows): for showing, never for changing."""
    return rows.one(scope, post_id)


def update_post(
    *,
    session: Session,
    principal: Principal,
    post_id,
    content=UNSET,
    platforms=UNSET,
    scheduled_at=UNSET,
) -> Post:
    scope = TenantScope.of(session, principal)
    post = scope.get(Post, post_id, resource="post", for_update=True)
    change_post(scope, post, content=content, platforms=platforms, scheduled_at=scheduled_at)
    session.commit()
    return post


def change_post(scope: TenantScope, post: Post, *, content=UNSET, platforms=UNSET, scheduled_at=UNSET) -> None:
    """Applies an edit to a loaded post, or raises before changing anything; the
    caller commits. Updates and bulk (re)scheduling share it."""
    guard_editable(post)
    new_platforms = check_platforms(platforms) if platforms is not UNSET else list(post.platforms)
    new_content = content if content is not UNSET else post.content
    if content is not UNSET or platforms is not UNSET:
        check_content(new_content, new_platforms)
    new_scheduled_at = post.scheduled_at if scheduled_at is UNSET else scheduled_at
    if scheduled_at is UNSET:
        new_status = post.status
    elif scheduled_at is None:
        new_status = PostStatus.DRAFT
    else:
        new_status = PostStatus.SCHEDULED
    # Whatever will be queued must satisfy the scheduling rules, including a scheduled
    # post whose platforms change.
    if new_status == PostStatus.SCHEDULED and (scheduled_at is not UNSET or platforms is not UNSET):
        check_schedule(scope, new_scheduled_at, new_platforms)
    became_scheduled = new_status == PostStatus.SCHEDULED and (
        post.status != PostStatus.SCHEDULED or scheduled_at is not UNSET
    )
    previous_scheduled_at = post.scheduled_at
    edited = new_content != post.content or new_platforms != list(post.platforms)
    post.content = new_content
    post.platforms = new_platforms
    post.scheduled_at = new_scheduled_at
    post.status = new_status
    sync_targets(scope, post)
    if edited:
        POSTS.announce("edited", scope=scope, record=post)
    if became_scheduled:
        _announce_scheduled(scope, post, previous_scheduled_at)


def _announce_scheduled(scope: TenantScope, post: Post, previous_scheduled_at: dt.datetime | None) -> None:
    """A post that gets a time: `scheduled`, or `rescheduled` when it had one."""
    if previous_scheduled_at is None:
        POSTS.announce("scheduled", scope=scope, record=post)
    else:
        POSTS.announce("rescheduled", scope=scope, record=post, previous_scheduled_at=previous_scheduled_at)


@scoped
def publish_now(scope: TenantScope, *, post_id) -> Post:
    """Due at once: the publishing dispatcher, which runs every second, hands it out."""
    session = scope.session
    post = scope.get(Post, post_id, resource="post", for_update=True)
    start_publishing(scope, post)
    session.commit()
    return post


def start_publishing(scope: TenantScope, post: Post) -> None:
    """Makes a loaded post due now; the caller commits. Publish now and bulk publish."""
    if post.status == PostStatus.PUBLISHED:
        raise ApiError.conflict("The post is already published.")
    if any(t.status == TargetStatus.PUBLISHING for t in post.targets):
        raise ApiError.conflict("The post is being published right now.")
    check_publishable(scope, post.content, list(post.platforms))
    previous_scheduled_at = post.scheduled_at
    post.status = PostStatus.SCHEDULED
    post.scheduled_at = utcnow()
    sync_targets(scope, post)
    _announce_scheduled(scope, post, previous_scheduled_at)


def schedule_post(scope: TenantScope, post: Post, scheduled_at: dt.datetime) -> None:
    """Bulk `schedule`: a draft gets its time and is queued."""
    if post.status != PostStatus.DRAFT:
        raise ApiError.conflict(f"The post is {post.status}, not a draft; reschedule it instead.")
    change_post(scope, post, scheduled_at=scheduled_at)


def reschedule_post(scope: TenantScope, post: Post, scheduled_at: dt.datetime) -> None:
    """Bulk `reschedule`: a scheduled post moves; a failed one retries what failed, then."""
    if post.status not in (PostStatus.SCHEDULED, PostStatus.FAILED):
        raise ApiError.conflict(f"The post is {post.status}; only scheduled or failed posts can be rescheduled.")
    change_post(scope, post, scheduled_at=scheduled_at)


def archive_post(scope: TenantScope, post: Post) -> None:
    """Bulk `archive`. A scheduled post would still go out while hidden, so it has to
    be unscheduled (or published) first."""
    if post.archived_at is not None:
        raise ApiError.conflict("The post is already archived.")
    if post.status == PostStatus.SCHEDULED:
        raise ApiError.conflict("The post is scheduled; unschedule it before archiving it.")
    post.archived_at = utcnow()
    POSTS.announce("archived", scope=scope, record=post)


def remove_post(scope: TenantScope, post: Post) -> None:
    """Removes a loaded post and what is queued for it; the caller commits. Announced
    before it goes, while subscribers can still read it."""
    POSTS.announce("deleted", scope=scope, record=post)
    scope.session.delete(post)


@scoped
def delete_post(scope: TenantScope, *, post_id) -> str:
    session = scope.session
    post = scope.get(Post, post_id, resource="post", for_update=True)
    identifier = str(post.id)
    remove_post(scope, post)
    session.commit()
    return identifier
