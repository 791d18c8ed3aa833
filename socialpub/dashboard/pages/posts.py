"""Posts: the workspace's posts of one mode, newest first (published, scheduled,
drafts and failures), each published now or deleted; and its bulk operations, a
running or pending one cancelled. The posts and bulk services of the API act, as the
signed-in member."""
from __future__ import annotations

from flask import render_template, request

from persistence.posts import PostStatus
from socialpub.bulk import service as bulk
from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.posts import service as posts

SHOWN = 50
STATUSES = [status.value for status in PostStatus]


@member_page("/posts/")
def posts_page():
    status = request.args.get("status") or None
    scope = member_scope()
    found = posts.list_posts.in_scope(scope, status=status, limit=SHOWN)
    operations = bulk.list_operations.in_scope(scope, limit=20)
    return render_template("dashboard/posts.html", posts=found.items, total=found.total, status=status,
                           statuses=STATUSES, operations=operations.items, mode=chosen_mode())


@member_page("/posts/<post_id>/publish", methods=["POST"])
def posts_publish(post_id):
    post = posts.publish_now.in_scope(member_scope(), post_id=post_id)
    return acted("post.published", "Publishing the post now: its targets are handed to the publisher.",
                 "dashboard.posts_page", target_id=post.id)


@member_page("/posts/<post_id>/delete", methods=["POST"])
def posts_delete(post_id):
    gone = posts.delete_post.in_scope(member_scope(), post_id=post_id)
    return acted("post.deleted", "Deleted the post; what was queued for it is cancelled.", "dashboard.posts_page",
                 target_id=gone)


@member_page("/posts/bulk/<operation_id>/cancel", methods=["POST"])
def posts_bulk_cancel(operation_id):
    operation = bulk.cancel_operation.in_scope(member_scope(), operation_id=operation_id)
    return acted("bulk.cancelled", f"Cancelled the bulk {operation.action}: {operation.processed} of "
                 f"{operation.total} posts were reached.", "dashboard.posts_page", target_id=operation.id)
