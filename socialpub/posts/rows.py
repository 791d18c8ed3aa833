"""Posts read as rows (the hot reads of the API: the list and `GET /posts/{id}`): a
page of posts, or one, each with its first comment (one outer join) and its targets
(one query for the page), read as Core rows and given to the schema as plain
records, with the attributes of the models. No ORM object is built: no identity
map, no instance state, nothing for the session to track or expunge. The schemas'
compiled dump plans read them as they read models.

A record here is read-only and lives for the response: services that change posts
read models (`service.update_post` and the rest)."""
from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy.sql import Select

from persistence.posts import FirstComment, Post, PostStatus, PostTarget
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope, parse_id

_POSTS = Post.__table__
_COMMENTS = FirstComment.__table__
_TARGETS = PostTarget.__table__
_POST_KEYS = tuple(column.key for column in _POSTS.c)
_COMMENT_KEYS = tuple(column.key for column in _COMMENTS.c)
# A first comment's columns, named apart from the post's.
_COMMENT_LABELS = tuple(column.label(f"first_comment_{column.key}") for column in _COMMENTS.c)


def page_statement(page: Select) -> Select:
    """The page's statement (its criteria, order and page kept) reading the posts'
    columns and their first comments' (envelope.paginate's `rows`)."""
    return page.with_only_columns(*_POSTS.c, *_COMMENT_LABELS).outerjoin(_COMMENTS, _COMMENTS.c.post_id == _POSTS.c.id)


def records(scope: TenantScope, rows) -> list[SimpleNamespace]:
    """The page's posts as records, each with `first_comment` (its `post` set back, as
    the model's is) and `targets`, read in one query for the page: drafts have
    none (targets exist only once a post is scheduled, and a post that went out is
    never a draft again), so a page of drafts costs no query for them."""
    posts = []
    for row in rows:
        values = row._mapping
        post = SimpleNamespace(**{key: values[key] for key in _POST_KEYS}, targets=[], first_comment=None)
        if values["first_comment_id"] is not None:
            post.first_comment = SimpleNamespace(
                **{key: values[f"first_comment_{key}"] for key in _COMMENT_KEYS}, post=post
            )
        posts.append(post)
    wanted = {post.id: post for post in posts if post.status != PostStatus.DRAFT}
    if wanted:
        query = (
            scope.select(PostTarget, PostTarget.post_id.in_(wanted))
            .with_only_columns(*_TARGETS.c)
            .order_by(PostTarget.platform, PostTarget.created_at)
        )
        for target in scope.session.execute(query):
            wanted[target.post_id].targets.append(SimpleNamespace(**target._mapping))
    return posts


def one(scope: TenantScope, post_id) -> SimpleNamespace:
    """The post as a record, or 404 naming it (a malformed id is simply not found)."""
    parsed = parse_id(post_id)
    if parsed is not None:
        row = scope.session.execute(page_statement(scope.select(Post, Post.id == parsed))).first()
        if row is not None:
            return records(scope, [row])[0]
    raise ApiError.not_found("post", post_id)
