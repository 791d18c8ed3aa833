"""A post's first comment: setting, reading, removing and retrying it, and what a job
does with a slice of claimed comments.

The comment is posted as a reply under each target that went out, on platforms that
take replies: settling a post queues it there (service.queue_comment), the dispatcher
claims it like a publication, and a job posts it through the same slice machinery
(runner.run_slice), its state on the target's `comment_` columns.
"""
from __future__ import annotations

import uuid

from sqlalchemy import bindparam, select, update

from persistence.accounts import ConnectedAccount
from persistence.posts import CommentStatus, FirstComment, Post, PostTarget, TargetStatus
from persistence.types import utcnow
from socialpub import platforms
from socialpub.connectors.base import PlatformError, Published
from socialpub.errors import ApiError
from socialpub.publishing.dispatch import COMMENT
from socialpub.publishing.runner import (
    ACCOUNT_COLUMNS, Taken, connection, execute, locked_target, record_failure, run_slice, take, take_statement,
)
from socialpub.publishing.service import queue_comment
from socialpub.tenancy import TenantScope

# What a job runs for every comment (see runner.py's statements).
_TAKE_COMMENT = take_statement(
    COMMENT, PostTarget.post_id, PostTarget.account_id, PostTarget.platform,
    PostTarget.external_id, PostTarget.url, PostTarget.reference,
)
# A first comment can be removed while it is being posted: read as each call is made.
_COMMENT_FOR_CALL = (
    select(FirstComment.content, *ACCOUNT_COLUMNS)
    .select_from(ConnectedAccount)
    .outerjoin(FirstComment, FirstComment.post_id == bindparam("b_post_id"))
    .where(ConnectedAccount.id == bindparam("b_account_id"))
)


def run_comment_slice(*, database, settings, connector_for, token, target_ids) -> dict[str, str]:
    """Posts the first comment under each target of a slice. Returns what happened to each."""

    def ready(taken: Taken):
        connector, credentials = connection(connector_for, taken)
        return lambda: connector.comment(
            credentials, parent=taken.parent, content=taken.content, idempotency_key=f"{taken.target_id}:comment"
        )

    return run_slice(
        database=database, settings=settings, kind=COMMENT, token=token, target_ids=target_ids,
        take=_take_comment, ready=ready, record=_record_comment,
    )


def run_comment_job(*, database, settings, connector_for, target_id, token) -> str:
    outcomes = run_comment_slice(
        database=database, settings=settings, connector_for=connector_for, token=token, target_ids=[target_id]
    )
    return outcomes[str(uuid.UUID(str(target_id)))]


def _take_comment(session, target_ids, token, settings, _prepared) -> dict[uuid.UUID, Taken | None]:
    taken: dict[uuid.UUID, Taken | None] = {}
    for target_id, row in take(session, _TAKE_COMMENT, target_ids, token, settings).items():
        run_token, attempt, post_id, account_id, platform, external_id, url, reference = row
        found = execute(session, _COMMENT_FOR_CALL, {"b_post_id": post_id, "b_account_id": account_id}).one()
        if found.content is None:
            # The comment was removed after it was claimed: nothing to post.
            session.execute(
                update(PostTarget).where(PostTarget.id == target_id).values(comment_status=None)
                .execution_options(synchronize_session=False)
            )
            taken[target_id] = None
            continue
        parent = Published(external_id=external_id, url=url, reference=dict(reference or {}))
        taken[target_id] = Taken(target_id, run_token, attempt, post_id, platform, found, found.content, parent)
    return taken


def _record_comment(session, taken: Taken, receipt: Published | None, error: PlatformError | None, settings) -> str:
    target = locked_target(session, taken.target_id)
    if target is None:
        return "deleted"
    if receipt is not None:
        if target.comment_status != CommentStatus.POSTED:
            target.comment_status = CommentStatus.POSTED
            target.comment_external_id, target.comment_url = receipt.external_id, receipt.url
            target.comment_posted_at = utcnow()
            target.comment_error_code = target.comment_error_message = None
            target.comment_lease_until = target.comment_claim_token = None
            _touch_comment(session, target.post_id)
        return "posted"
    outcome = record_failure(target, taken, error, settings, COMMENT)
    if outcome == "failed":
        _touch_comment(session, target.post_id)
    return outcome


def _touch_comment(session, post_id) -> None:
    """The comment's status is its targets': when it changes, the comment was updated."""
    session.execute(
        update(FirstComment).where(FirstComment.post_id == post_id).values(updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )


# -- the API's operations ---------------------------------------------------------

def _post_for_comment(session, principal, post_id, *, for_update: bool = True) -> tuple[TenantScope, Post]:
    """The post, locked for a change to its comment: settle_posts takes the same lock
    to queue the comment on targets as they publish."""
    scope = TenantScope.of(session, principal)
    return scope, scope.get(Post, post_id, resource="post", for_update=for_update)


def get_first_comment(*, session, principal, post_id) -> FirstComment:
    # Reading changes nothing: it must not wait for, nor hold up, a job settling the post.
    _, post = _post_for_comment(session, principal, post_id, for_update=False)
    if post.first_comment is None:
        raise ApiError(404, "resource_not_found", f"Post '{post_id}' has no first comment.")
    return post.first_comment


def set_first_comment(*, session, principal, post_id, content: str) -> FirstComment:
    scope, post = _post_for_comment(session, principal, post_id)
    comment = attach_first_comment(scope, post, content)
    session.commit()
    return comment


def attach_first_comment(scope: TenantScope, post: Post, content: str, *, field: str = "content") -> FirstComment:
    """Sets a loaded (locked) post's first comment in the caller's transaction, or
    raises (naming `field`) before changing anything: `PUT /posts/{postId}/first-comment`,
    and a calendar reservation converted with its comment."""
    if content is None or not content.strip():
        raise ApiError.field_invalid(field, "The first comment must not be blank.")
    replying = [p for p in post.platforms if platforms.supports_replies(p)]
    if not replying:
        raise ApiError.field_invalid(
            field, f"None of this post's platforms ({', '.join(post.platforms)}) supports replies."
        )
    try:
        platforms.check_length(content, replying, posted_on=", which it is posted on,")
    except ApiError as exc:
        if field == "content":
            raise
        raise ApiError.field_invalid(field, exc.message) from None
    if any(t.comment_status in (CommentStatus.POSTED, CommentStatus.POSTING) for t in post.targets):
        raise ApiError.conflict("The first comment has already been posted; it can no longer be changed.")
    if post.first_comment is None:
        post.first_comment = FirstComment(workspace_id=post.workspace_id, livemode=post.livemode, content=content)
    else:
        post.first_comment.content = content
    now = utcnow()
    for target in post.targets:
        if target.status == TargetStatus.PUBLISHED and target.comment_status is None:
            queue_comment(target, now)
    return post.first_comment


def delete_first_comment(*, session, principal, post_id) -> str:
    _, post = _post_for_comment(session, principal, post_id)
    comment = post.first_comment
    if comment is None:
        raise ApiError(404, "resource_not_found", f"Post '{post_id}' has no first comment.")
    identifier = str(comment.id)
    for target in post.targets:
        if target.comment_status in (CommentStatus.PENDING, CommentStatus.FAILED):
            target.comment_status = None
    post.first_comment = None
    session.commit()
    return identifier


def retry_first_comment(*, session, principal, post_id) -> FirstComment:
    _, post = _post_for_comment(session, principal, post_id)
    if post.first_comment is None:
        raise ApiError.conflict("The post has no first comment; there is nothing to retry.")
    failed = [t for t in post.targets if t.comment_status == CommentStatus.FAILED]
    if not failed:
        raise ApiError.conflict("The first comment has not failed anywhere; there is nothing to retry.")
    now = utcnow()
    for target in failed:
        queue_comment(target, now)
        target.comment_error_code = target.comment_error_message = None
    post.first_comment.updated_at = now
    session.commit()
    return post.first_comment
