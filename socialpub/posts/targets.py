"""A post's targets: one per (platform, active connected account) once it is
scheduled, and what they allow. The posts services keep them in step with the post;
publishing (socialpub.publishing) works through them."""
from __future__ import annotations

import uuid

from persistence.posts import Post, PostStatus, PostTarget, TargetStatus
from socialpub.accounts import service as accounts
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope


def guard_editable(post: Post) -> None:
    """A post that has gone out anywhere, or is going out now, cannot change: what a
    platform shows would no longer be the post (and a draft never has targets that
    went out). Publishing it again retries where it failed."""
    if post.status == PostStatus.PUBLISHED:
        raise ApiError.conflict("A published post cannot be edited.")
    went_out = sorted({t.platform for t in post.targets if t.status == TargetStatus.PUBLISHED})
    if went_out:
        raise ApiError.conflict(
            f"The post has already gone out on {', '.join(went_out)}, so it cannot be edited; "
            "publish it again to retry where it failed."
        )
    if any(t.status == TargetStatus.PUBLISHING for t in post.targets):
        raise ApiError.conflict("The post is being published right now; try again in a moment.")


def sync_targets(scope: TenantScope, post: Post) -> None:
    """Make the post's targets match its state: none for a draft; one per active
    account on its platforms, due at scheduledAt, for a scheduled post."""
    if post.status == PostStatus.DRAFT:
        for target in list(post.targets):
            if target.status in (TargetStatus.PENDING, TargetStatus.FAILED):
                post.targets.remove(target)
        return
    if post.status != PostStatus.SCHEDULED:
        return
    for target in post.targets:
        if target.status == TargetStatus.FAILED:
            # Scheduling a failed post again retries what failed, never what went out.
            target.status, target.attempts = TargetStatus.PENDING, 0
            target.error_code = target.error_message = None
    wanted = {account.id: account for account in accounts.active_accounts(scope=scope, platforms=post.platforms)}
    for target in list(post.targets):
        if target.account_id not in wanted and target.status in (TargetStatus.PENDING, TargetStatus.FAILED):
            post.targets.remove(target)
    have = {target.account_id for target in post.targets}
    for account_id, account in wanted.items():
        if account_id not in have:
            post.targets.append(
                PostTarget(
                    # Its id now, not at flush: the post.scheduled event shows it.
                    id=uuid.uuid4(), workspace_id=post.workspace_id, livemode=post.livemode, account_id=account_id,
                    platform=account.platform, status=TargetStatus.PENDING, attempts=0,
                )
            )
    for target in post.targets:
        if target.status == TargetStatus.PENDING:
            target.next_attempt_at = post.scheduled_at
