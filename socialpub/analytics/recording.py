"""Recording what a slice measured, in one transaction per slice: one snapshot per
(target or account, bucket), the latest reading of each row, the change of the daily
rollups it makes (rollups.add_readings), and the pauses of the accounts a platform
rate limited.

Only rows the slice's claim still holds are written: a slice whose lease ran out and
was handed out again records nothing. A second run in the same bucket inserts no
snapshot (unique constraint) and only refreshes the latest reading. Every row carries
the workspace and mode of the target or account measured.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, update

from persistence.analytics import FollowerSnapshot, PostSnapshot, TrackedAccount, TrackedPost
from socialpub import claims
from socialpub.analytics import rollups
from socialpub.analytics.dispatch import day_bucket, post_bucket
from socialpub.analytics.metrics import engagement_rate_of, engagements_of

logger = logging.getLogger("socialpub.analytics")

SNAPSHOT_BATCH = 500


@dataclass
class Outcome:
    """What measuring one row (a TrackedPost or a TrackedAccount) came to: a reading,
    or an error; when it is next due, and until when its account is left alone."""

    row_id: uuid.UUID
    reading: Any = None
    error_code: str | None = None
    next_due_at: dt.datetime | None = None
    paused_until: dt.datetime | None = None


def latest_values(reading, *, followers_at_post: int | None) -> dict:
    """A TrackedPost's columns for a reading, its engagements and rate included."""
    engagements = engagements_of(
        likes=reading.likes, comments=reading.comments, shares=reading.shares, clicks=reading.clicks
    )
    denominator = reading.impressions if reading.impressions is not None else followers_at_post
    denominator = denominator if denominator else None
    return dict(
        impressions=reading.impressions, reach=reading.reach, clicks=reading.clicks, likes=reading.likes,
        comments=reading.comments, shares=reading.shares, engagements=engagements,
        followers_at_post=followers_at_post, rate_denominator=denominator,
        rated_engagements=engagements if denominator else 0,
        engagement_rate=engagement_rate_of(
            engagements=engagements, impressions=reading.impressions, followers=followers_at_post
        ),
    )


_POSTS = TrackedPost.__table__
_MEASURED = (
    update(_POSTS).where(_POSTS.c.id == bindparam("b_id"), _POSTS.c.claim_token == bindparam("b_token"))
    .values(
        impressions=bindparam("impressions"), reach=bindparam("reach"), clicks=bindparam("clicks"),
        likes=bindparam("likes"), comments=bindparam("comments"), shares=bindparam("shares"),
        engagements=bindparam("engagements"), followers_at_post=bindparam("followers_at_post"),
        rate_denominator=bindparam("rate_denominator"), rated_engagements=bindparam("rated_engagements"),
        engagement_rate=bindparam("engagement_rate"), captured_at=bindparam("captured_at"),
        next_due_at=bindparam("next_due_at"), error_code=None, lease_until=None, claim_token=None,
        updated_at=bindparam("captured_at"),
    )
)
_NOT_MEASURED = (
    update(_POSTS).where(_POSTS.c.id == bindparam("b_id"), _POSTS.c.claim_token == bindparam("b_token"))
    .values(next_due_at=bindparam("next_due_at"), error_code=bindparam("error_code"), lease_until=None, claim_token=None)
)


def record_posts(database, *, token, now, targets, outcomes: list[Outcome], followers, pauses) -> None:
    """Records a slice of targets: `targets` by TrackedPost id (the rows the slice
    read), `followers` by account id, `pauses` the (until, code) of each account a
    platform rate limited."""
    measured = [outcome for outcome in outcomes if outcome.reading is not None]
    failed = [outcome for outcome in outcomes if outcome.reading is None]
    with database.transaction() as session:
        # Every target of the slice's posts, locked, as it stood before: what the
        # rollups add the change of. Only rows this claim still holds are recorded: a
        # slice whose lease ran out and was handed out again records nothing.
        before = rollups.lock_targets(session, tracked_ids=[o.row_id for o in outcomes]) if outcomes else []
        held = {target.id for target in before if target.claim_token == token}
        measured = [outcome for outcome in measured if outcome.row_id in held]
        failed = [outcome for outcome in failed if outcome.row_id in held]
        snapshots = []
        updates = []
        for outcome in measured:
            target, reading = targets[outcome.row_id], outcome.reading
            bucket_start = post_bucket(target.published_at, now)[0]
            snapshots.append(dict(
                id=uuid.uuid4(), workspace_id=target.workspace_id, livemode=target.livemode, target_id=target.target_id,
                bucket_start=bucket_start, captured_at=now, impressions=reading.impressions, reach=reading.reach,
                clicks=reading.clicks, likes=reading.likes, comments=reading.comments, shares=reading.shares,
                created_at=now, updated_at=now,
            ))
            updates.append(dict(
                b_id=outcome.row_id, b_token=token, captured_at=now, next_due_at=outcome.next_due_at,
                **latest_values(reading, followers_at_post=(
                    # Followers are measured daily, so the first reading after the
                    # post went out stands for the audience it went out to.
                    target.followers_at_post if target.followers_at_post is not None else followers.get(target.account_id)
                )),
            ))
        for start in range(0, len(snapshots), SNAPSHOT_BATCH):
            claims.insert_new(
                session, PostSnapshot, snapshots[start:start + SNAPSHOT_BATCH],
                unique=["target_id", "bucket_start"], returning=PostSnapshot.id,
            )
        connection = session.connection()
        if updates:
            connection.execute(_MEASURED, updates)
        if failed:
            connection.execute(_NOT_MEASURED, [
                dict(b_id=o.row_id, b_token=token, next_due_at=o.next_due_at, error_code=o.error_code) for o in failed
            ])
        for account_id, (until, code) in pauses.items():
            pause_account(session, account_id, until, code)
        rollups.add_readings(session, before, {update["b_id"]: update for update in updates})


def pause_account(session, account_id, until: dt.datetime, code: str | None) -> None:
    """Leaves an account alone until `until`: nothing of it is claimed before."""
    session.execute(
        update(TrackedAccount).where(TrackedAccount.account_id == account_id)
        .values(paused_until=until, error_code=code).execution_options(synchronize_session=False)
    )
    logger.warning(
        "analytics paused for a rate-limited account", extra={"account_id": str(account_id), "until": until.isoformat()}
    )


def record_accounts(database, *, token, now, measured: list[tuple[Any, Outcome]]) -> dict[str, int]:
    """Records a slice of accounts: `measured`, each account's row (as the slice read
    it) and its outcome. Returns how many were measured, failed and paused."""
    bucket_start = day_bucket(now)[0]
    counts = {"measured": 0, "failed": 0, "paused": 0}
    with database.transaction() as session:
        for row, outcome in measured:
            values: dict[str, Any] = dict(lease_until=None, claim_token=None, next_due_at=outcome.next_due_at)
            reading = outcome.reading
            if reading is not None:
                claims.insert_new(session, FollowerSnapshot, [dict(
                    id=uuid.uuid4(), workspace_id=row.workspace_id, livemode=row.livemode, account_id=row.id,
                    platform=row.platform, bucket_start=bucket_start, captured_at=now, followers=reading.followers,
                    created_at=now, updated_at=now,
                )], unique=["account_id", "bucket_start"], returning=FollowerSnapshot.id)
                values.update(followers=reading.followers, captured_at=now, error_code=None, paused_until=None)
                counts["measured"] += 1
            else:
                values.update(error_code=outcome.error_code)
                if outcome.paused_until is not None:
                    values.update(paused_until=outcome.paused_until)
                    counts["paused"] += 1
                else:
                    counts["failed"] += 1
            session.execute(
                update(TrackedAccount).where(TrackedAccount.id == row.tracked_id, TrackedAccount.claim_token == token)
                .values(**values).execution_options(synchronize_session=False)
            )
    return counts
