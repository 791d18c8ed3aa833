"""The posts area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.posts import CommentStatus, FirstComment, Post, PostStatus, PostTarget, TargetStatus
from persistence.types import utcnow
from tests.support.contract import RecordFactory, SuccessRequest
from tests.support.factories import make_post


def _post(session, workspace, livemode):
    return make_post(session, workspace, livemode=livemode).id


def _find_post(session, post_id):
    return session.execute(select(Post).where(Post.id == post_id)).scalar_one_or_none()


def _draft_with_a_first_comment(session, workspace):
    post = make_post(session, workspace)
    session.add(FirstComment(workspace_id=workspace.id, livemode=False, post=post, content="Link in bio"))
    session.commit()
    return SuccessRequest(path_values={"postId": post.id})


def _published_with_a_failed_first_comment(session, workspace):
    """Out on the workspace's test-mode twitter account, its first comment refused there
    for good: what a retry is for."""
    account = session.execute(
        select(ConnectedAccount).where(
            ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.livemode.is_(False),
            ConnectedAccount.platform == "twitter",
        )
    ).scalar_one()
    now = utcnow()
    post = make_post(session, workspace, status=PostStatus.PUBLISHED, published_at=now)
    session.add_all([
        FirstComment(workspace_id=workspace.id, livemode=False, post=post, content="Link in bio"),
        PostTarget(
            workspace_id=workspace.id, livemode=False, post=post, account_id=account.id, platform="twitter",
            status=TargetStatus.PUBLISHED, attempts=1, external_id="sbx_published", published_at=now,
            comment_status=CommentStatus.FAILED, comment_attempts=1,
            comment_error_code="platform_rejected", comment_error_message="The platform refused the comment.",
        ),
    ])
    session.commit()
    return SuccessRequest(path_values={"postId": post.id})


RECORD_FACTORIES = {
    "postId": RecordFactory(make=_post, find=_find_post),
}

SUCCESS_REQUESTS = {
    "posts.get_first_comment": _draft_with_a_first_comment,
    "posts.delete_first_comment": _draft_with_a_first_comment,
    "posts.retry_first_comment": _published_with_a_failed_first_comment,
}
