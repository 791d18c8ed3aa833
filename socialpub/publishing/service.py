"""Publishing a post: settling it from what happened to its targets.

The database is the truth. A scheduled post has one target per (platform, active
account), due at its time (the posts services keep them: socialpub.posts.targets).
The dispatcher (dispatch.py) claims due targets and hands them to the queue in slices; a job works through a slice (runner.py), recording each
platform's receipt on its target; the posts are then settled here: their first
comment queued where they went out (first_comments.py posts it), and their status
derived from their targets', their publications and failures announced
(socialpub.posts.changes.POSTS) with the `publishing` job as the actor.
"""
from __future__ import annotations

from sqlalchemy import case, func, select, tuple_
from sqlalchemy.orm import joinedload

from persistence.posts import CommentStatus, Post, PostStatus, PostTarget, TargetStatus
from persistence.types import utcnow
from socialpub import claims, sweeps
from socialpub.platforms import supports_replies
from socialpub.posts.changes import POSTS
from socialpub.tenancy import TenantScope

ACTOR = "publishing"


def queue_comment(target: PostTarget, now) -> None:
    """Makes the post's first comment due on a target that went out, where the
    platform takes replies."""
    if supports_replies(target.platform):
        target.comment_status = CommentStatus.PENDING
        target.comment_next_attempt_at = now
        target.comment_attempts = 0


# -- settling posts -----------------------------------------------------------------

def _derived_status(current: str, statuses: set[str]) -> str:
    """What a post's status should be, given its targets' statuses."""
    if not statuses or current not in (PostStatus.SCHEDULED, PostStatus.FAILED, PostStatus.PUBLISHED):
        return current
    if statuses == {TargetStatus.PUBLISHED}:
        return PostStatus.PUBLISHED
    if TargetStatus.FAILED in statuses and not statuses & {TargetStatus.PENDING, TargetStatus.PUBLISHING}:
        return PostStatus.FAILED
    return PostStatus.SCHEDULED


def settle_post(post: Post) -> str | None:
    """Derives the post's status from its targets. Returns the change to announce
    when it came to its publication or failure (None otherwise)."""
    targets = post.targets
    new_status = _derived_status(post.status, {t.status for t in targets})
    if new_status == post.status:
        return None
    post.status = new_status
    if new_status == PostStatus.PUBLISHED:
        post.published_at = max(t.published_at for t in targets if t.published_at)
    return str(new_status) if new_status in (PostStatus.PUBLISHED, PostStatus.FAILED) else None


def _announce(session, settled: dict) -> None:
    """One change per workspace mode and kind, its record the posts it is about: the
    subscribers do their work for a job's posts together (analytics enrols them in
    one statement, not one a post)."""
    for (workspace_id, livemode, kind), posts in sorted(settled.items(), key=lambda item: str(item[0])):
        scope = TenantScope.for_job(session, workspace_id, livemode, job=ACTOR)
        POSTS.announce(kind, scope=scope, record=posts)


def settle_posts(session, post_ids, *, skip_locked: bool = False) -> int:
    """What follows from the outcomes recorded on these posts' targets: each post's
    first comment queued on its targets newly published, and settle_post. The posts
    are locked first, in one order (two jobs settling posts they share cannot
    deadlock), and read after: set_first_comment holds the same lock while it queues
    the comment on the targets already published, so between the two every published
    target gets it once. The posts that came to their publication or failure are
    announced together, per workspace mode. Returns how many posts it locked."""
    lock = claims.lock_rows(
        session, select(Post.id).where(Post.id.in_(set(post_ids))).order_by(Post.id), skip_locked=skip_locked
    )
    locked = list(session.execute(lock).scalars())
    if locked:
        # Joined rather than selectin: a post has few targets, and one more query costs
        # more than repeating the post's columns.
        posts = session.execute(
            select(Post).where(Post.id.in_(locked))
            .options(joinedload(Post.targets), joinedload(Post.first_comment))
            .execution_options(populate_existing=True)
        ).unique().scalars()
        now = utcnow()
        settled: dict = {}
        for post in posts:
            if post.first_comment is not None:
                for target in post.targets:
                    if target.status == TargetStatus.PUBLISHED and target.comment_status is None:
                        queue_comment(target, now)
            kind = settle_post(post)
            if kind is not None:
                settled.setdefault((post.workspace_id, post.livemode, kind), []).append(post)
        _announce(session, settled)
    return len(locked)


_IN_FLIGHT = (TargetStatus.PENDING, TargetStatus.PUBLISHING)


def settle_unsettled_posts(session, *, now, limit: int = 500, position: sweeps.Position | None = None) -> int:
    """Settles due posts that still say scheduled although none of their targets is
    pending or being published: what a job leaves when it dies between recording its
    receipts and settling their posts. Returns how many it settled. (A post with a
    target still in flight is settled by the job that has it.)

    It looks at `limit` due posts, in (scheduled_at, id) order after `position`
    (which it moves on), and asks their targets by post:
    what it reads stays the same however many posts a burst has made due (a
    burst's due posts all have targets in flight), and no plan can join every due
    post with every target in flight, as one with stale statistics did."""
    due = select(Post.id, Post.scheduled_at).where(Post.status == PostStatus.SCHEDULED, Post.scheduled_at <= now)
    if position is not None and position.after is not None:
        due = due.where(tuple_(Post.scheduled_at, Post.id) > tuple_(*position.after))
    rows = session.execute(due.order_by(Post.scheduled_at, Post.id).limit(limit)).all()
    if position is not None:
        position.after = (rows[-1].scheduled_at, rows[-1].id) if len(rows) == limit else None
    if not rows:
        return 0
    in_flight = func.max(case((PostTarget.status.in_(_IN_FLIGHT), 1), else_=0))
    targets = session.execute(
        select(PostTarget.post_id, in_flight).where(PostTarget.post_id.in_([row.id for row in rows]))
        .group_by(PostTarget.post_id)
    ).all()
    ids = [post_id for post_id, flying in targets if not flying]  # a post without targets is not among them
    # Skipping what someone else holds: whoever holds a post settles it, or the next sweep.
    return settle_posts(session, ids, skip_locked=True) if ids else 0
