"""Posts: drafts and scheduled posts, their rules and state changes."""
from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session, joinedload, noload, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from persistence.posts import Post, PostTarget
from persistence.types import utcnow
from socialpub.envelope import Page
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.accounts import service as accounts
from socialpub.events import service as events
from socialpub.publishing import service as publishing
from socialpub import platforms as platform_rules
from socialpub.tenancy import TenantScope

DRAFT, SCHEDULED, PUBLISHED, FAILED = "draft", "scheduled", "published", "failed"
STATUSES = (DRAFT, SCHEDULED, PUBLISHED, FAILED)
UNSET = object()


def _check_platforms(platforms) -> list[str]:
    platforms = list(platforms or [])
    if not platforms:
        raise ApiError.field_invalid("platforms", "Name at least one platform.")
    unknown = [p for p in platforms if p not in platform_rules.CONTENT_LIMITS]
    if unknown:
        raise ApiError.field_invalid("platforms", f"Unsupported platform(s): {', '.join(unknown)}.")
    if len(set(platforms)) != len(platforms):
        raise ApiError.field_invalid("platforms", "Each platform may be named once.")
    return platforms


def _check_content(content: str, platforms: list[str]) -> str:
    if content is None or not content.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    platform_rules.check_length(content, platforms)
    return content


def _check_schedule(scope: TenantScope, scheduled_at: dt.datetime, platforms: list[str]) -> None:
    if scheduled_at.tzinfo is None:
        raise ApiError.field_invalid("scheduledAt", "scheduledAt needs a timezone offset, e.g. Z.")
    if scheduled_at <= utcnow():
        raise ApiError.field_invalid("scheduledAt", "scheduledAt must be in the future.")
    _check_accounts(scope, platforms)


def check_publishable(scope: TenantScope, content: str, platforms: list[str]) -> None:
    """What publishing now needs: content within limits and an account everywhere."""
    _check_content(content, platforms)
    _check_accounts(scope, platforms)


def _check_accounts(scope: TenantScope, platforms: list[str]) -> None:
    missing = accounts.platforms_without_active_account(scope=scope, platforms=platforms)
    if missing:
        mode = "live" if scope.livemode else "test"
        raise ApiError.field_invalid(
            "platforms",
            f"No active connected {mode}-mode account on {', '.join(missing)}; connect one before scheduling.",
        )


def list_posts(
    *,
    session: Session,
    principal: Principal,
    status: str | None = None,
    include_archived: bool = False,
    limit: int = 20,
    offset: int = 0,
) -> Page:
    scope = TenantScope.of(session, principal)
    criteria = []
    if status is not None:
        if status not in STATUSES:
            raise ApiError.field_invalid("query.status", f"status must be one of {', '.join(STATUSES)}.")
        criteria.append(Post.status == status)
    if not include_archived:
        criteria.append(Post.archived_at.is_(None))
    query = (
        scope.select(Post, *criteria)
        .options(joinedload(Post.first_comment), noload(Post.targets))
        .order_by(Post.created_at.desc(), Post.id.desc())
        .limit(limit)
        .offset(offset)
    )
    items = list(session.execute(query).scalars())
    _attach_targets(scope, items)
    # A first page that is not full is everything there is: no need to count.
    total = len(items) if offset == 0 and len(items) < limit else scope.count(Post, *criteria)
    return Page(items=items, total=total, limit=limit, offset=offset)


def _attach_targets(scope: TenantScope, posts: list[Post]) -> None:
    """Loads the targets of a page of posts in one query. Drafts have none (targets
    exist only once a post is scheduled, and a post that went out is never a draft
    again), so a page of drafts costs no query at all."""
    wanted = [post.id for post in posts if post.status != DRAFT]
    by_post: dict = {post.id: [] for post in posts}
    if wanted:
        query = scope.select(PostTarget, PostTarget.post_id.in_(wanted)).order_by(PostTarget.platform, PostTarget.created_at)
        for target in scope.session.execute(query).scalars():
            by_post[target.post_id].append(target)
    for post in posts:
        set_committed_value(post, "targets", by_post[post.id])


def create_post(
    *,
    session: Session,
    principal: Principal,
    content: str,
    platforms,
    scheduled_at: dt.datetime | None = None,
) -> Post:
    scope = TenantScope.of(session, principal)
    platforms = _check_platforms(platforms)
    content = _check_content(content, platforms)
    if scheduled_at is not None:
        _check_schedule(scope, scheduled_at, platforms)
    post = scope.add(
        Post(
            content=content,
            platforms=platforms,
            status=SCHEDULED if scheduled_at is not None else DRAFT,
            scheduled_at=scheduled_at,
            # Known to be empty: set, so showing the new post reads nothing back.
            targets=[],
            first_comment=None,
        )
    )
    if post.status == SCHEDULED:
        publishing.sync_targets(scope, post)
        events.record_post_event(session, post, "post.scheduled")
    session.commit()
    return post


def get_post(*, session: Session, principal: Principal, post_id) -> Post:
    return TenantScope.of(session, principal).get(
        Post, post_id, resource="post", options=(selectinload(Post.targets), joinedload(Post.first_comment))
    )


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
    publishing.guard_editable(post)
    new_platforms = _check_platforms(platforms) if platforms is not UNSET else list(post.platforms)
    new_content = content if content is not UNSET else post.content
    if content is not UNSET or platforms is not UNSET:
        _check_content(new_content, new_platforms)
    new_scheduled_at = post.scheduled_at if scheduled_at is UNSET else scheduled_at
    if scheduled_at is UNSET:
        new_status = post.status
    elif scheduled_at is None:
        new_status = DRAFT
    else:
        new_status = SCHEDULED
    # Whatever will be queued must satisfy the scheduling rules, including a scheduled
    # post whose platforms change.
    if new_status == SCHEDULED and (scheduled_at is not UNSET or platforms is not UNSET):
        _check_schedule(scope, new_scheduled_at, new_platforms)
    became_scheduled = new_status == SCHEDULED and (post.status != SCHEDULED or scheduled_at is not UNSET)
    post.content = new_content
    post.platforms = new_platforms
    post.scheduled_at = new_scheduled_at
    post.status = new_status
    publishing.sync_targets(scope, post)
    if became_scheduled:
        events.record_post_event(scope.session, post, "post.scheduled")


def schedule_post(scope: TenantScope, post: Post, scheduled_at: dt.datetime) -> None:
    """Bulk `schedule`: a draft gets its time and is queued."""
    if post.status != DRAFT:
        raise ApiError.conflict(f"The post is {post.status}, not a draft; reschedule it instead.")
    change_post(scope, post, scheduled_at=scheduled_at)


def reschedule_post(scope: TenantScope, post: Post, scheduled_at: dt.datetime) -> None:
    """Bulk `reschedule`: a scheduled post moves; a failed one retries what failed, then."""
    if post.status not in (SCHEDULED, FAILED):
        raise ApiError.conflict(f"The post is {post.status}; only scheduled or failed posts can be rescheduled.")
    change_post(scope, post, scheduled_at=scheduled_at)


def archive_post(scope: TenantScope, post: Post) -> None:
    """Bulk `archive`. A scheduled post would still go out while hidden, so it has to
    be unscheduled (or published) first."""
    if post.archived_at is not None:
        raise ApiError.conflict("The post is already archived.")
    if post.status == SCHEDULED:
        raise ApiError.conflict("The post is scheduled; unschedule it before archiving it.")
    post.archived_at = utcnow()


def remove_post(scope: TenantScope, post: Post) -> None:
    """Removes a loaded post and what is queued for it; the caller commits."""
    scope.session.delete(post)


def delete_post(*, session: Session, principal: Principal, post_id) -> str:
    scope = TenantScope.of(session, principal)
    post = scope.get(Post, post_id, resource="post", for_update=True)
    identifier = str(post.id)
    remove_post(scope, post)
    session.commit()
    return identifier
