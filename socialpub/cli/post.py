"""`socialpub post list|show|publish|delete`: a workspace's posts, as the API shows them;
publishing and deleting go through the posts service, as the operator."""
from __future__ import annotations

from persistence.posts import Post, PostStatus
from socialpub.cli.records import Action, Noun, by_service, paged
from socialpub.posts import service
from socialpub.posts.schemas import PostSchema

NOUN = Noun(
    name="post", help="posts (published, scheduled and drafts)", model=Post, resource="post",
    list_records=paged(service.list_posts), show_record=by_service(service.get_post, "post_id"),
    dump=PostSchema().dump, columns=("id", "livemode", "status", "scheduledAt", "platforms", "content"),
    list_arguments=((("--status",), {"choices": [status.value for status in PostStatus]}),),
    actions=(
        Action("publish", "publish a post now (its targets that have not published)",
               by_service(service.publish_now, "post_id"), done="Publishing"),
        Action("delete", "delete a post and cancel what is queued for it",
               by_service(service.delete_post, "post_id"), done="Deleted"),
    ),
)
register = NOUN.register
