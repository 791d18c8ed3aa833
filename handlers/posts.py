"""Handlers of the `posts` tag."""
from socialpub import envelope
from socialpub.request import current_principal, current_session, load
from socialpub.posts.schemas import FirstCommentSchema, PostSchema
from socialpub.posts import service as post_service
from socialpub.publishing import service as publishing

post_schema = PostSchema()
comment_schema = FirstCommentSchema()


def _dump(post) -> dict:
    return post_schema.dump(post)


def list_posts(status=None, include_archived=False, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = post_service.list_posts(
        session=current_session(),
        principal=current_principal(),
        status=status,
        include_archived=include_archived,
        limit=limit,
        offset=offset,
    )
    return envelope.page(result, lambda posts: post_schema.dump(posts, many=True))


def create_post(body):
    fields = load(post_schema, body)
    post = post_service.create_post(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(_dump(post), location=f"/api/v1/posts/{post.id}")


def get_post(post_id):
    post = post_service.get_post(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.ok(_dump(post))


def update_post(post_id, body):
    fields = load(post_schema, body, partial=True)
    post = post_service.update_post(
        session=current_session(), principal=current_principal(), post_id=post_id, **fields
    )
    return envelope.ok(_dump(post))


def delete_post(post_id):
    deleted_id = post_service.delete_post(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.deleted(deleted_id)


def publish_post(post_id):
    post = publishing.publish_now(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.accepted(_dump(post), location=f"/api/v1/posts/{post.id}")


def get_first_comment(post_id):
    comment = publishing.get_first_comment(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.ok(comment_schema.dump(comment))


def set_first_comment(post_id, body):
    fields = load(comment_schema, body)
    comment = publishing.set_first_comment(
        session=current_session(), principal=current_principal(), post_id=post_id, **fields
    )
    return envelope.ok(comment_schema.dump(comment))


def delete_first_comment(post_id):
    deleted_id = publishing.delete_first_comment(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.deleted(deleted_id)


def retry_first_comment(post_id):
    comment = publishing.retry_first_comment(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.accepted(comment_schema.dump(comment), location=f"/api/v1/posts/{post_id}/first-comment")
