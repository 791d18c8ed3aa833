"""The API with the posts list's totalItems counted row by row, as before the post
counters (migration 0027): `gunicorn ... 'posts_counted_app:create_app()'`, run from
bench/. bench/posts.py measures the list beside the same API reading the counters.
Used by the benchmark only: the product reads the counters."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from persistence.posts import Post  # noqa: E402
from socialpub.posts import service  # noqa: E402


def counted_total(scope, *, status, include_archived):
    """The total as the list asked it before: a COUNT of the matching posts."""
    criteria = [Post.status == status] if status is not None else []
    if not include_archived:
        criteria.append(Post.archived_at.is_(None))
    return scope.count_query(Post, *criteria)


service.total_query = counted_total

from socialpub.app import create_app  # noqa: E402,F401
