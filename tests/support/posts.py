"""Reading posts as the tests check them: how many there are, and what a refused post
request says."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.posts import Post


def post_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(Post)).scalar_one()


def assert_validation_error(response, field: str | None = None, says: str | None = None):
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    if field is not None:
        assert field in [detail["field"] for detail in error.get("details", [])], error
    if says is not None:
        assert says in error["message"] or any(says in d["message"] for d in error.get("details", [])), error
    return error


def counted_posts(session) -> dict:
    """The posts there are, counted row by row: {(workspace_id, livemode, status,
    archived): count}, as the post counters count them."""
    session.expire_all()
    archived = Post.archived_at.is_not(None)
    rows = session.execute(
        select(Post.workspace_id, Post.livemode, Post.status, archived, func.count())
        .group_by(Post.workspace_id, Post.livemode, Post.status, archived)
    )
    return {(workspace_id, bool(livemode), status, bool(flag)): count for workspace_id, livemode, status, flag, count in rows}


def kept_counters(session) -> dict:
    """The post counters, each the sum of its rows, keyed as `counted_posts` (those
    that count nothing left out)."""
    from persistence.posts import PostCounter

    session.expire_all()
    key = (PostCounter.workspace_id, PostCounter.livemode, PostCounter.status, PostCounter.archived)
    rows = session.execute(select(*key, func.sum(PostCounter.count)).group_by(*key))
    return {(workspace_id, bool(livemode), status, bool(flag)): int(total)
            for workspace_id, livemode, status, flag, total in rows if total}


def assert_counters_exact(session) -> None:
    """Every post counter equals the count of its posts."""
    counted, kept = counted_posts(session), kept_counters(session)
    drift = {key: (counted.get(key, 0), kept.get(key, 0)) for key in counted.keys() | kept.keys()
             if counted.get(key, 0) != kept.get(key, 0)}
    assert drift == {}, f"(posts, counter) where they differ: {drift}"


def assert_list_totals_exact(client, key, session) -> None:
    """The posts list's totalItems, for every status and with or without archived
    posts, equal a count of the key's posts."""
    session.expire_all()
    mine = (Post.workspace_id == key.model.workspace_id, Post.livemode == key.model.livemode)
    for status in (None, "draft", "scheduled", "published", "failed"):
        for archived in (False, True):
            criteria = [*mine] + ([Post.status == status] if status else []) + ([] if archived else [Post.archived_at.is_(None)])
            expected = session.execute(select(func.count()).select_from(Post).where(*criteria)).scalar_one()
            params = {"includeArchived": str(archived).lower(), **({"status": status} if status else {})}
            body = client.get("/api/v1/posts", headers=key.headers, params=params).json()
            assert body["pagination"]["totalItems"] == expected, (params, body["pagination"])
