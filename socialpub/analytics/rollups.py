"""Daily rollups: the sums of the latest readings of the targets published on one UTC
day, per platform and for all platforms ("*"), so that a report over 90 days reads a
few hundred rows rather than every target.

They are kept by adding changes, never by summing a day again, so a measurement costs
the same however many targets its day holds:

- `add_readings`: the snapshot job, in the transaction that records a slice, adds each
  target's change of reading to its day's rows (a target's first reading adds it
  whole, and adds its post to the day's post count unless another target of that post
  was measured there before);
- `remove_posts`: a post deleted (a subscriber of the posts' "deleted" announcement)
  takes its measured targets out, and a day left with no post loses its rows.

Both first lock every tracked target of the posts concerned (`lock_targets`, in id
order, where the database has row locks; SQLite's writers take turns anyway), so two
jobs measuring targets of one post take turns and its post is counted once; the sums
are added in one statement whose conflicts add up, so jobs measuring other posts of
one day never wait for each other nor lose a change.

`refresh_days` sums days again from the targets themselves: what the kept rows must
always equal (the tests compare them), and the way to rebuild them.
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping

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
# The TrackedPost columns behind SUMMED, in its order.
SUMMED_COLUMNS = SUM_NAMES[1:]
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


# --- kept by adding changes ---------------------------------------------------------------

_TARGET_STATE = (
    TrackedPost.id, TrackedPost.post_id, TrackedPost.workspace_id, TrackedPost.livemode, TrackedPost.published_day,
    TrackedPost.platform, TrackedPost.captured_at, TrackedPost.claim_token,
    *(getattr(TrackedPost, name) for name in SUMMED_COLUMNS),
)


def lock_targets(session, *, tracked_ids=None, post_ids=None) -> list:
    """Every tracked target of the posts of `tracked_ids` (TrackedPost ids) or of
    `post_ids`, as it stands, locked until the transaction ends: what `add_readings`
    and `remove_posts` start from."""
    posts = (
        select(TrackedPost.post_id).where(TrackedPost.id.in_(list(tracked_ids))).scalar_subquery()
        if tracked_ids is not None else list(post_ids)
    )
    return list(session.execute(claims.lock_rows(
        session, select(*_TARGET_STATE).where(TrackedPost.post_id.in_(posts)).order_by(TrackedPost.id), of=TrackedPost,
    )).all())


def _values(row) -> tuple[int, ...]:
    return tuple(int(getattr(row, name) or 0) for name in SUMMED_COLUMNS)


class _Changes:
    """The changes to rollup rows, by (workspace, mode, day, platform), in the order of
    SUM_NAMES; and, per group, the posts of `targets` already measured there."""

    def __init__(self, targets):
        self.sums: dict[tuple, list[int]] = {}
        self.counted: set[tuple] = set()
        for target in targets:
            if target.captured_at is not None:
                for group in self.groups(target):
                    self.counted.add((*group, target.post_id))

    @staticmethod
    def groups(target) -> tuple[tuple, tuple]:
        day = (target.workspace_id, target.livemode, target.published_day)
        return (*day, target.platform), (*day, ALL_PLATFORMS)

    def add(self, target, values: tuple[int, ...], *, sign: int = 1) -> None:
        """Adds `values` (SUMMED_COLUMNS' changes) to the target's groups, and
        `sign` to their post count where its post is not counted yet."""
        for group in self.groups(target):
            sums = self.sums.setdefault(group, [0] * len(SUM_NAMES))
            if (*group, target.post_id) not in self.counted:
                self.counted.add((*group, target.post_id))
                sums[0] += sign
            for index, value in enumerate(values, 1):
                sums[index] += value


def add_readings(session, targets, readings: Mapping[uuid.UUID, Mapping[str, int | None]]) -> int:
    """Adds new readings to the rollups: `targets` as `lock_targets` read them (before
    the readings were recorded), `readings` the new values (TrackedPost columns) by the
    id of each target measured. Returns the rollup rows written."""
    changes = _Changes(targets)
    for target in targets:
        reading = readings.get(target.id)
        if reading is None:
            continue
        before = _values(target) if target.captured_at is not None else (0,) * len(SUMMED_COLUMNS)
        after = tuple(int(reading[name] or 0) for name in SUMMED_COLUMNS)
        changes.add(target, tuple(new - old for new, old in zip(after, before)))
    return _add(session, changes.sums)


def remove_posts(session, post_ids) -> int:
    """Takes these posts' measured targets out of the rollups, before the posts go
    (their targets cascade); a day's row left with no post goes. Returns the rollup
    rows changed."""
    targets = [target for target in lock_targets(session, post_ids=post_ids) if target.captured_at is not None]
    changes = _Changes([])
    for target in targets:
        changes.add(target, tuple(-value for value in _values(target)), sign=-1)
    written = _add(session, changes.sums)
    if changes.sums:
        session.execute(
            delete(DailyRollup).where(
                tuple_(DailyRollup.workspace_id, DailyRollup.livemode, DailyRollup.day, DailyRollup.platform)
                .in_(sorted(changes.sums)),
                DailyRollup.posts <= 0,
            ).execution_options(synchronize_session=False)
        )
    return written


_GROUP = ("workspace_id", "livemode", "day", "platform")


def _add(session, sums: dict[tuple, list[int]]) -> int:
    """Adds `sums` to the rollup rows of their groups, creating the rows missing, in
    one statement, in the groups' order: a row another writer creates meanwhile is
    added to, not lost."""
    changed = sorted(
        ((group, values) for group, values in sums.items() if any(values)),
        key=lambda item: tuple(str(part) for part in item[0]),
    )
    now = clock.now()
    return claims.insert_adding(session, DailyRollup, [
        dict(id=uuid.uuid4(), created_at=now, updated_at=now, **dict(zip(_GROUP, group)), **dict(zip(SUM_NAMES, values)))
        for group, values in changed
    ], unique=list(_GROUP), adding=SUM_NAMES, replacing=("updated_at",))
