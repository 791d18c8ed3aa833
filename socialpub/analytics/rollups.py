"""Daily rollups: the sums of the latest readings of the targets published on one UTC
day, per platform and for all platforms ("*"), so that a report over 90 days reads a
few hundred rows rather than every target.

The snapshot job refreshes the days whose targets it measured, in the transaction
that records them: it locks the day's rollup rows (where the database has row locks),
so two jobs refreshing one day take turns, the second recomputing from what the first
committed. Two jobs rolling up a day for the very first time at once may leave it
missing the second one's readings until that day is next measured (within the hour
for recent posts).
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable

from sqlalchemy import delete, distinct, func, select, tuple_

from persistence.analytics import DailyRollup, TrackedPost
from socialpub import claims, clock

ALL_PLATFORMS = "*"
# The order of a group's sums everywhere in this area; SUMMED sums all but posts.
SUM_NAMES = (
    "posts", "impressions", "reach", "clicks", "likes", "comments", "shares", "engagements", "rated_engagements",
    "rate_denominator",
)
SUMMED = (
    func.coalesce(func.sum(TrackedPost.impressions), 0),
    func.coalesce(func.sum(TrackedPost.reach), 0),
    func.coalesce(func.sum(TrackedPost.clicks), 0),
    func.coalesce(func.sum(TrackedPost.likes), 0),
    func.coalesce(func.sum(TrackedPost.comments), 0),
    func.coalesce(func.sum(TrackedPost.shares), 0),
    func.coalesce(func.sum(TrackedPost.engagements), 0),
    func.coalesce(func.sum(TrackedPost.rated_engagements), 0),
    func.coalesce(func.sum(TrackedPost.rate_denominator), 0),
)
_TENANT_DAY = (TrackedPost.workspace_id, TrackedPost.livemode, TrackedPost.published_day)


def day_groups(session, *criteria) -> dict[tuple, tuple[int, ...]]:
    """The sums of the measured targets matching `criteria`, by (workspace, mode, day,
    platform), "*" standing for all platforms."""
    measured = (TrackedPost.captured_at.is_not(None), *criteria)
    groups: dict[tuple, tuple[int, ...]] = {}
    by_platform = (
        select(*_TENANT_DAY, TrackedPost.platform, func.count(distinct(TrackedPost.post_id)), *SUMMED)
        .where(*measured).group_by(*_TENANT_DAY, TrackedPost.platform)
    )
    for row in session.execute(by_platform).all():
        groups[tuple(row[:4])] = tuple(int(value) for value in row[4:])
    all_platforms = (
        select(*_TENANT_DAY, func.count(distinct(TrackedPost.post_id)), *SUMMED)
        .where(*measured).group_by(*_TENANT_DAY)
    )
    for row in session.execute(all_platforms).all():
        groups[(*row[:3], ALL_PLATFORMS)] = tuple(int(value) for value in row[3:])
    return groups


def refresh_days(session, days: Iterable[tuple[uuid.UUID, bool, dt.date]]) -> int:
    """Recomputes the rollups of these (workspace, mode, day); returns the rows written."""
    keys = sorted(set(days))
    if not keys:
        return 0
    of_days = tuple_(DailyRollup.workspace_id, DailyRollup.livemode, DailyRollup.day).in_(keys)
    session.execute(
        claims.lock_rows(session, select(DailyRollup.id).where(of_days).order_by(DailyRollup.id))
    ).all()
    session.execute(delete(DailyRollup).where(of_days).execution_options(synchronize_session=False))
    now = clock.now()
    rows = [
        dict(
            id=uuid.uuid4(), workspace_id=workspace_id, livemode=livemode, day=day, platform=platform,
            created_at=now, updated_at=now, **dict(zip(SUM_NAMES, sums)),
        )
        for (workspace_id, livemode, day, platform), sums in day_groups(session, tuple_(*_TENANT_DAY).in_(keys)).items()
    ]
    return len(claims.insert_new(
        session, DailyRollup, rows, unique=["workspace_id", "livemode", "day", "platform"], returning=DailyRollup.id,
    ))
