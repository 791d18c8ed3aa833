"""Metrics collection: which targets and accounts are due, and measuring them.

`dispatch` (periodic, on the queue) enrols the targets published in the last 90 days
on connectors that report metrics, and their accounts; then claims due rows with a
lease and a claim token (socialpub.claims), one token per slice, and enqueues a job
per slice. A target is due once per time bucket (hourly for its first 48 hours,
daily after), an account's followers once per UTC day. The job measures its slice,
one account at a time per thread, and writes one snapshot per (row, bucket): a second
run in the same bucket inserts nothing (unique constraint) and only refreshes the
latest reading.

A platform that rate limits us pauses that account until its Retry-After: the rest
of that account's slice waits for then, and nothing more of it is claimed before.
Any other failure is that target's or that account's alone.

This is system work across every workspace: it reads targets and accounts by id, and
every row it writes carries the workspace and mode of the target or account measured.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import and_, bindparam, exists, func, or_, select, update

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.analytics import FollowerSnapshot, PostSnapshot, TrackedAccount, TrackedPost
from persistence.posts import Post, PostTarget, TargetStatus
from socialpub import claims, clock, crypto
from socialpub.accounts.service import credentials_for
from socialpub.analytics import rollups
from socialpub.analytics.metrics import engagement_rate_of, engagements_of
from socialpub.connectors.base import PlatformError
from socialpub.connectors.registry import CONNECTORS

logger = logging.getLogger("socialpub.analytics")

TRACKED_FOR = dt.timedelta(days=90)
HOURLY_FOR = dt.timedelta(hours=48)
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)
ENROL_BATCH = 1000
RATE_LIMITED = "rate_limited"


def metrics_connectors() -> list[str]:
    return sorted(name for name, cls in CONNECTORS.items() if getattr(cls, "reports_metrics", False))


def _floor_hour(moment: dt.datetime) -> dt.datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _floor_day(moment: dt.datetime) -> dt.datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def post_bucket(published_at: dt.datetime, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The bucket a target measured now falls in: (start, end)."""
    if now - published_at < HOURLY_FOR:
        start = _floor_hour(now)
        return start, start + HOUR
    start = _floor_day(now)
    return start, start + DAY


def day_bucket(now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    start = _floor_day(now)
    return start, start + DAY


# --- enrolment and claims ---------------------------------------------------------


def enrol(session, *, now: dt.datetime, limit: int) -> int:
    """Starts tracking published targets (and their accounts) not tracked yet."""
    connectors = metrics_connectors()
    untracked = (
        select(
            PostTarget.id, PostTarget.post_id, PostTarget.account_id, PostTarget.platform, PostTarget.published_at,
            PostTarget.workspace_id, PostTarget.livemode, func.length(Post.content),
        )
        .join(Post, Post.id == PostTarget.post_id)
        .join(ConnectedAccount, ConnectedAccount.id == PostTarget.account_id)
        .where(
            PostTarget.status == TargetStatus.PUBLISHED,
            PostTarget.published_at >= now - TRACKED_FOR,
            PostTarget.external_id.is_not(None),
            ConnectedAccount.connector.in_(connectors),
            ~exists().where(TrackedPost.target_id == PostTarget.id),
        )
        .limit(limit)
    )
    rows = [
        dict(
            id=uuid.uuid4(), target_id=target_id, post_id=post_id, account_id=account_id, platform=platform,
            published_at=published_at, published_day=published_at.date(), content_length=length or 0,
            likes=0, comments=0, shares=0, engagements=0, rated_engagements=0, next_due_at=now,
            workspace_id=workspace_id, livemode=livemode, created_at=now, updated_at=now,
        )
        for target_id, post_id, account_id, platform, published_at, workspace_id, livemode, length
        in session.execute(untracked).all()
    ]
    enrolled = 0
    for start in range(0, len(rows), ENROL_BATCH):
        enrolled += len(claims.insert_new(
            session, TrackedPost, rows[start:start + ENROL_BATCH], unique=["target_id"], returning=TrackedPost.id,
        ))
    accounts = session.execute(
        select(ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.workspace_id, ConnectedAccount.livemode)
        .where(
            ConnectedAccount.connector.in_(connectors),
            exists().where(TrackedPost.account_id == ConnectedAccount.id),
            ~exists().where(TrackedAccount.account_id == ConnectedAccount.id),
        )
    ).all()
    claims.insert_new(session, TrackedAccount, [
        dict(
            id=uuid.uuid4(), account_id=account_id, platform=platform, next_due_at=now,
            workspace_id=workspace_id, livemode=livemode, created_at=now, updated_at=now,
        )
        for account_id, platform, workspace_id, livemode in accounts
    ], unique=["account_id"], returning=TrackedAccount.id)
    return enrolled


def _lease_free(model, now):
    return or_(model.lease_until.is_(None), model.lease_until < now)


def _claim_slices(session, model, due, *, now, settings) -> list[tuple[str, list]]:
    ids = claims.due_ids(session, model, due, order_by=model.next_due_at, limit=settings.analytics_batch_size)
    lease_until = now + dt.timedelta(seconds=settings.analytics_lease_seconds)
    slices = []
    for start in range(0, len(ids), settings.analytics_slice_size):
        chunk, token = ids[start:start + settings.analytics_slice_size], str(uuid.uuid4())
        claimed = set(claims.set_where_still(
            session, model, chunk, due, {model.lease_until: lease_until, model.claim_token: token}
        ))
        taken = [row_id for row_id in chunk if row_id in claimed]
        if taken:
            slices.append((token, taken))
    return slices


def claim_due(session, *, now: dt.datetime, settings) -> tuple[list, list]:
    """Claims due targets and due accounts, in slices sharing a claim token each:
    (target slices, account slices), each a list of (token, ids)."""
    account_paused = exists().where(
        TrackedAccount.account_id == TrackedPost.account_id, TrackedAccount.paused_until > now
    )
    posts_due = and_(
        TrackedPost.next_due_at <= now, _lease_free(TrackedPost, now),
        TrackedPost.published_at >= now - TRACKED_FOR, ~account_paused,
    )
    accounts_due = and_(
        TrackedAccount.next_due_at <= now, _lease_free(TrackedAccount, now),
        or_(TrackedAccount.paused_until.is_(None), TrackedAccount.paused_until <= now),
    )
    # Accounts first: a target's engagement rate divides by its account's followers.
    account_slices = _claim_slices(session, TrackedAccount, accounts_due, now=now, settings=settings)
    post_slices = _claim_slices(session, TrackedPost, posts_due, now=now, settings=settings)
    return post_slices, account_slices


def dispatch(*, database, queue, settings, post_job: Callable, account_job: Callable, now=None) -> int:
    """Enrols new targets, claims what is due and enqueues a job per slice; returns
    how many targets and accounts it handed out. A slice the queue refused is given
    back at once."""
    now = now or clock.now()
    with database.transaction() as session:
        enrol(session, now=now, limit=settings.analytics_batch_size)
        post_slices, account_slices = claim_due(session, now=now, settings=settings)
    work = [(account_job, TrackedAccount, token, ids) for token, ids in account_slices]
    work += [(post_job, TrackedPost, token, ids) for token, ids in post_slices]
    for index, (job, _model, token, ids) in enumerate(work):
        try:
            queue.enqueue(job, token, [str(row_id) for row_id in ids], job_id=f"analytics-{token}")
        except Exception:
            with database.transaction() as session:
                for _, model, left_token, _ in work[index:]:
                    session.execute(
                        update(model).where(model.claim_token == left_token)
                        .values(lease_until=None, claim_token=None).execution_options(synchronize_session=False)
                    )
            raise
    return sum(len(ids) for _, _, _, ids in work)


# --- measuring ----------------------------------------------------------------------


_ACCOUNT_COLUMNS = (
    ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.handle, ConnectedAccount.options,
    ConnectedAccount.secrets_encrypted, ConnectedAccount.connector, ConnectedAccount.status,
)


@dataclass
class _Outcome:
    """What measuring one row came to: a reading, or an error and when to try again."""

    row_id: uuid.UUID
    reading: Any = None
    error_code: str | None = None
    next_due_at: dt.datetime | None = None


def _connection(connector_for, account):
    """The connector and credentials of an account, or the PlatformError that says why
    it cannot be measured now."""
    if account.status != AccountStatus.ACTIVE:
        raise PlatformError(f"account_{account.status}", f"The account is {account.status}.", transient=False)
    try:
        connector = connector_for(account.connector)
        credentials = credentials_for(account)
    except (ValueError, crypto.UndecryptableSecret) as exc:
        raise PlatformError(
            "account_unusable", f"The account cannot be used: {exc.__class__.__name__}", transient=False
        ) from None
    return connector, credentials


def _pause_for(error: PlatformError, *, now: dt.datetime, settings) -> dt.datetime | None:
    """Until when a failure asks us to leave the account alone; None when it does not."""
    if error.code != RATE_LIMITED and error.retry_after is None:
        return None
    seconds = error.retry_after if error.retry_after is not None else settings.analytics_rate_limit_pause_seconds
    return now + dt.timedelta(seconds=max(seconds, 1.0))


def _measure_account_targets(
    connector_for, account, targets, *, now, settings, next_bucket
) -> tuple[list, dt.datetime | None, str | None]:
    """Measures one account's targets in turn. Returns (outcomes, paused until, code):
    a rate limit stops the account there, and its remaining targets wait for it."""
    outcomes: list[_Outcome] = []
    try:
        connector, credentials = _connection(connector_for, account)
    except PlatformError as error:
        return [_Outcome(t.id, error_code=error.code, next_due_at=next_bucket(t)) for t in targets], None, error.code
    for index, target in enumerate(targets):
        try:
            reading = connector.fetch_post_metrics(credentials, target.external_id, published_at=target.published_at)
        except PlatformError as error:
            paused_until = _pause_for(error, now=now, settings=settings)
            if paused_until is not None:
                outcomes += [_Outcome(t.id, error_code=error.code, next_due_at=paused_until) for t in targets[index:]]
                return outcomes, paused_until, error.code
            if error.auth_failed:
                # The token is refused for every post of the account alike.
                outcomes += [_Outcome(t.id, error_code=error.code, next_due_at=next_bucket(t)) for t in targets[index:]]
                return outcomes, None, error.code
            retry_at = now + dt.timedelta(seconds=settings.analytics_snapshot_interval_seconds)
            next_due_at = retry_at if error.transient else next_bucket(target)
            outcomes.append(_Outcome(target.id, error_code=error.code, next_due_at=next_due_at))
            continue
        except Exception:  # noqa: BLE001 - a connector bug must not stop the other accounts
            logger.exception("metrics reading failed unexpectedly", extra={"account_id": str(account.id)})
            outcomes += [_Outcome(t.id, error_code="internal_error", next_due_at=next_bucket(t)) for t in targets[index:]]
            return outcomes, None, "internal_error"
        if reading is None:
            outcomes.append(_Outcome(target.id, error_code="metrics_unsupported", next_due_at=next_bucket(target)))
        else:
            outcomes.append(_Outcome(target.id, reading=reading, next_due_at=next_bucket(target)))
    return outcomes, None, None


def _in_parallel(function, groups: list, settings) -> list:
    if len(groups) <= 1:
        return [function(group) for group in groups]
    with ThreadPoolExecutor(max_workers=max(1, min(settings.analytics_concurrency, len(groups)))) as pool:
        return list(pool.map(function, groups))


_TARGETS_OF_SLICE = (
    select(
        TrackedPost.id, TrackedPost.target_id, TrackedPost.account_id, TrackedPost.published_at,
        TrackedPost.followers_at_post, PostTarget.external_id, TrackedPost.workspace_id, TrackedPost.livemode,
    )
    .join(PostTarget, PostTarget.id == TrackedPost.target_id)
    .where(TrackedPost.id.in_(bindparam("b_ids", expanding=True)), TrackedPost.claim_token == bindparam("b_token"))
)


def run_post_slice(*, database, settings, connector_for, token: str, tracked_ids: list[str], now=None) -> dict[str, int]:
    """Measures a claimed slice of targets; returns how many were measured, failed and
    waited for a rate-limited account."""
    now = now or clock.now()
    ids = [uuid.UUID(str(value)) for value in tracked_ids]
    with database.transaction() as session:
        targets = session.execute(_TARGETS_OF_SLICE, {"b_ids": ids, "b_token": token}).all()
        account_ids = {target.account_id for target in targets}
        accounts = {row.id: row for row in session.execute(
            select(*_ACCOUNT_COLUMNS).where(ConnectedAccount.id.in_(account_ids))
        ).all()} if account_ids else {}
        followers, paused = {}, {}
        for account_id, count, paused_until in session.execute(
            select(TrackedAccount.account_id, TrackedAccount.followers, TrackedAccount.paused_until)
            .where(TrackedAccount.account_id.in_(account_ids))
        ).all() if account_ids else ():
            followers[account_id] = count
            if paused_until is not None and paused_until > now:
                paused[account_id] = paused_until
    if not targets:
        return {"measured": 0, "failed": 0, "paused": 0}

    by_account: dict[uuid.UUID, list] = {}
    for target in targets:
        by_account.setdefault(target.account_id, []).append(target)

    def next_bucket(target) -> dt.datetime:
        return post_bucket(target.published_at, now)[1]

    def measure(account_id):
        if account_id in paused:
            # Rate limited since this slice was claimed (by another job of this run,
            # say): its targets wait, unasked, until the platform's Retry-After.
            until = paused[account_id]
            return account_id, ([_Outcome(t.id, error_code=RATE_LIMITED, next_due_at=until) for t in by_account[account_id]],
                                until, RATE_LIMITED)
        return account_id, _measure_account_targets(
            connector_for, accounts[account_id], by_account[account_id], now=now, settings=settings, next_bucket=next_bucket,
        )

    results = _in_parallel(measure, [account_id for account_id in by_account if account_id in accounts], settings)
    targets_by_id = {target.id: target for target in targets}
    outcomes = [outcome for _, (found, _, _) in results for outcome in found]
    pauses = {account_id: (until, code) for account_id, (_, until, code) in results if until is not None}
    _record_posts(
        database, token=token, now=now, targets=targets_by_id, outcomes=outcomes, followers=followers, pauses=pauses,
    )
    measured = sum(1 for outcome in outcomes if outcome.reading is not None)
    paused = sum(
        1 for outcome in outcomes if outcome.reading is None and targets_by_id[outcome.row_id].account_id in pauses
    )
    return {"measured": measured, "failed": len(outcomes) - measured - paused, "paused": paused}


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
SNAPSHOT_BATCH = 500


def _record_posts(database, *, token, now, targets, outcomes, followers, pauses) -> None:
    measured = [outcome for outcome in outcomes if outcome.reading is not None]
    failed = [outcome for outcome in outcomes if outcome.reading is None]
    with database.transaction() as session:
        # Only rows this claim still holds: a slice whose lease ran out and was handed
        # out again records nothing.
        held = set(session.execute(
            select(TrackedPost.id).where(TrackedPost.id.in_([o.row_id for o in outcomes]), TrackedPost.claim_token == token)
        ).scalars()) if outcomes else set()
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
            _pause_account(session, account_id, until, code)
        rollups.refresh_days(session, {
            (targets[o.row_id].workspace_id, targets[o.row_id].livemode, targets[o.row_id].published_at.date())
            for o in measured
        })


def _pause_account(session, account_id, until: dt.datetime, code: str | None) -> None:
    session.execute(
        update(TrackedAccount).where(TrackedAccount.account_id == account_id)
        .values(paused_until=until, error_code=code).execution_options(synchronize_session=False)
    )
    logger.warning(
        "analytics paused for a rate-limited account", extra={"account_id": str(account_id), "until": until.isoformat()}
    )


def run_account_slice(*, database, settings, connector_for, token: str, tracked_ids: list[str], now=None) -> dict[str, int]:
    """Measures the followers of a claimed slice of accounts, once per UTC day each."""
    now = now or clock.now()
    ids = [uuid.UUID(str(value)) for value in tracked_ids]
    with database.transaction() as session:
        rows = session.execute(
            select(TrackedAccount.id.label("tracked_id"), TrackedAccount.workspace_id, TrackedAccount.livemode,
                   *_ACCOUNT_COLUMNS)
            .join(ConnectedAccount, ConnectedAccount.id == TrackedAccount.account_id)
            .where(TrackedAccount.id.in_(ids), TrackedAccount.claim_token == token)
        ).all()
    if not rows:
        return {"measured": 0, "failed": 0, "paused": 0}
    bucket_start, bucket_end = day_bucket(now)

    def measure(row):
        try:
            connector, credentials = _connection(connector_for, row)
            return row, connector.fetch_account_metrics(credentials), None
        except PlatformError as error:
            return row, None, error
        except Exception:  # noqa: BLE001 - a connector bug must not stop the other accounts
            logger.exception("follower reading failed unexpectedly", extra={"account_id": str(row.id)})
            return row, None, PlatformError("internal_error", "Unexpected failure.", transient=True)

    results = _in_parallel(measure, rows, settings)
    counts = {"measured": 0, "failed": 0, "paused": 0}
    with database.transaction() as session:
        for row, reading, error in results:
            values: dict[str, Any] = dict(lease_until=None, claim_token=None, next_due_at=bucket_end)
            if reading is not None:
                claims.insert_new(session, FollowerSnapshot, [dict(
                    id=uuid.uuid4(), workspace_id=row.workspace_id, livemode=row.livemode, account_id=row.id,
                    platform=row.platform, bucket_start=bucket_start, captured_at=now, followers=reading.followers,
                    created_at=now, updated_at=now,
                )], unique=["account_id", "bucket_start"], returning=FollowerSnapshot.id)
                values.update(followers=reading.followers, captured_at=now, error_code=None, paused_until=None)
                counts["measured"] += 1
            elif error is not None:
                paused_until = _pause_for(error, now=now, settings=settings)
                values.update(error_code=error.code)
                if paused_until is not None:
                    values.update(paused_until=paused_until, next_due_at=paused_until)
                    counts["paused"] += 1
                else:
                    if error.transient:
                        values.update(next_due_at=now + dt.timedelta(seconds=settings.analytics_snapshot_interval_seconds))
                    counts["failed"] += 1
            else:
                values.update(error_code="metrics_unsupported")
                counts["failed"] += 1
            session.execute(
                update(TrackedAccount).where(TrackedAccount.id == row.tracked_id, TrackedAccount.claim_token == token)
                .values(**values).execution_options(synchronize_session=False)
            )
    return counts
