"""The posts list's `totalItems`, read from the post counters (persistence.posts.PostCounter)
rather than by counting rows: the same exact number, in time that does not grow
with the workspace.

The triggers of migration 0027 keep the counters in the transaction that writes a
post, whoever writes it, so a read sees the counters and the posts of one snapshot.
Every filter of the list (the scope's workspace and mode, `status`, whether archived
posts are included) is a key of the counters: every page of the list is counted
this way, exactly.
"""
from __future__ import annotations

from sqlalchemy import BigInteger, cast, false, func, select
from sqlalchemy.sql import Select

from persistence.posts import PostCounter
from socialpub.tenancy import TenantScope


def total_query(scope: TenantScope, *, status: str | None, include_archived: bool) -> Select:
    """How many posts of the scope are in `status` (any, for None), archived ones
    included or not, as a query for `envelope.paginate`: the sum of the counters'
    rows, read through their primary key (a few rows per mode, status and archived)."""
    criteria = scope.criteria(PostCounter)
    if status is not None:
        criteria.append(PostCounter.status == status)
    if not include_archived:
        criteria.append(PostCounter.archived == false())
    return select(cast(func.coalesce(func.sum(PostCounter.count), 0), BigInteger)).where(*criteria)
