"""Handlers of the `posts` tag."""
from socialpub import envelope
from socialpub.middleware import API_PREFIX
from socialpub.posts import service as post_service
from socialpub.posts.schemas import FirstCommentSchema, PostSchema
from socialpub.publishing import first_comments
from socialpub.request import current_principal, current_session, load

post_schema = PostSchema()
comment_schema = FirstCommentSchema()


def _post_location(post_id) -> str:
    return f"{API_PREFIX}/posts/{post_id}"


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
    return envelope.created(post_schema.dump(post), location=_post_location(post.id))


def get_post(post_id):
    post = post_service.get_post(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.ok(post_schema.dump(post))


def update_post(post_id, body):
    fields = load(post_schema, body, partial=True)
    post = post_service.update_post(
        session=current_session(), principal=current_principal(), post_id=post_id, **fields
    )
    return envelope.ok(post_schema.dump(post))


def delete_post(post_id):
    deleted_id = post_service.delete_post(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.deleted(deleted_id)


def publish_post(post_id):
    post = post_service.publish_now(session=current_session(), principal=current_principal(), post_id=post_id)
    return envelope.accepted(post_schema.dump(post), location=_post_location(post.id))


def get_first_comment(post_id):
    comment = first_comments.get_first_comment(
        session=current_session(), principal=current_principal(), post_id=post_id
    )
    return envelope.ok(comment_schema.dump(comment))


def set_first_comment(post_id, body):
    fields = load(comment_schema, body)
    comment = first_comments.set_first_comment(
        session=current_session(), principal=current_principal(), post_id=post_id, **fields
    )
    return envelope.ok(comment_schema.dump(comment))


def delete_first_comment(post_id):
    deleted_id = first_comments.delete_first_comment(
        session=current_session(), principal=current_principal(), post_id=post_id
    )
    return envelope.deleted(deleted_id)


def retry_first_comment(post_id):
    comment = first_comments.retry_first_comment(
        session=current_session(), principal=current_principal(), post_id=post_id
    )
    return envelope.accepted(comment_schema.dump(comment), location=f"{_post_location(post_id)}/first-comment")
