"""What a collecting job does with a slice of claims: read the slice, measure each
row on its platform, and hand the outcomes to recording.py.

A slice is measured one account at a time per thread (up to analytics_concurrency
accounts at once): an account's targets are asked for in turn, so one account is never
asked for several at once. A platform that rate limits us pauses that account until
its Retry-After: the rest of that account's slice waits for then, and nothing more of
it is claimed before (dispatch.claim_due). Any other failure is that target's or that
account's alone. A slice whose claim was taken over meanwhile (its lease ran out)
finds nothing to measure, or records nothing.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import bindparam, select

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.analytics import TrackedAccount, TrackedPost
from persistence.posts import PostTarget
from socialpub import clock, crypto
from socialpub.accounts.service import credentials_for
from socialpub.analytics import recording
from socialpub.analytics.dispatch import day_bucket, post_bucket
from socialpub.analytics.recording import Outcome
from socialpub.connectors.base import PlatformError

logger = logging.getLogger("socialpub.analytics")

RATE_LIMITED = "rate_limited"

_ACCOUNT_COLUMNS = (
    ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.handle, ConnectedAccount.options,
    ConnectedAccount.secrets_encrypted, ConnectedAccount.connector, ConnectedAccount.status,
)


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


def _in_parallel(function, groups: list, settings) -> list:
    if len(groups) <= 1:
        return [function(group) for group in groups]
    with ThreadPoolExecutor(max_workers=max(1, min(settings.analytics_concurrency, len(groups)))) as pool:
        return list(pool.map(function, groups))


# --- targets ------------------------------------------------------------------------------


def _measure_account_targets(
    connector_for, account, targets, *, now, settings, next_bucket
) -> tuple[list, dt.datetime | None, str | None]:
    """Measures one account's targets in turn. Returns (outcomes, paused until, code):
    a rate limit stops the account there, and its remaining targets wait for it."""
    outcomes: list[Outcome] = []
    try:
        connector, credentials = _connection(connector_for, account)
    except PlatformError as error:
        return [Outcome(t.id, error_code=error.code, next_due_at=next_bucket(t)) for t in targets], None, error.code
    for index, target in enumerate(targets):
        try:
            reading = connector.fetch_post_metrics(credentials, target.external_id, published_at=target.published_at)
        except PlatformError as error:
            paused_until = _pause_for(error, now=now, settings=settings)
            if paused_until is not None:
                outcomes += [Outcome(t.id, error_code=error.code, next_due_at=paused_until) for t in targets[index:]]
                return outcomes, paused_until, error.code
            if error.auth_failed:
                # The token is refused for every post of the account alike.
                outcomes += [Outcome(t.id, error_code=error.code, next_due_at=next_bucket(t)) for t in targets[index:]]
                return outcomes, None, error.code
            retry_at = now + dt.timedelta(seconds=settings.analytics_snapshot_interval_seconds)
            next_due_at = retry_at if error.transient else next_bucket(target)
            outcomes.append(Outcome(target.id, error_code=error.code, next_due_at=next_due_at))
            continue
        except Exception:  # noqa: BLE001 - a connector bug must not stop the other accounts
            logger.exception("metrics reading failed unexpectedly", extra={"account_id": str(account.id)})
            outcomes += [Outcome(t.id, error_code="internal_error", next_due_at=next_bucket(t)) for t in targets[index:]]
            return outcomes, None, "internal_error"
        if reading is None:
            outcomes.append(Outcome(target.id, error_code="metrics_unsupported", next_due_at=next_bucket(target)))
        else:
            outcomes.append(Outcome(target.id, reading=reading, next_due_at=next_bucket(target)))
    return outcomes, None, None


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
            return account_id, ([Outcome(t.id, error_code=RATE_LIMITED, next_due_at=until) for t in by_account[account_id]],
                                until, RATE_LIMITED)
        return account_id, _measure_account_targets(
            connector_for, accounts[account_id], by_account[account_id], now=now, settings=settings, next_bucket=next_bucket,
        )

    results = _in_parallel(measure, [account_id for account_id in by_account if account_id in accounts], settings)
    targets_by_id = {target.id: target for target in targets}
    outcomes = [outcome for _, (found, _, _) in results for outcome in found]
    pauses = {account_id: (until, code) for account_id, (_, until, code) in results if until is not None}
    recording.record_posts(
        database, token=token, now=now, targets=targets_by_id, outcomes=outcomes, followers=followers, pauses=pauses,
    )
    measured = sum(1 for outcome in outcomes if outcome.reading is not None)
    paused = sum(
        1 for outcome in outcomes if outcome.reading is None and targets_by_id[outcome.row_id].account_id in pauses
    )
    return {"measured": measured, "failed": len(outcomes) - measured - paused, "paused": paused}


# --- accounts ------------------------------------------------------------------------------


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
    bucket_end = day_bucket(now)[1]

    def measure(row):
        try:
            connector, credentials = _connection(connector_for, row)
            reading = connector.fetch_account_metrics(credentials)
        except PlatformError as error:
            paused_until = _pause_for(error, now=now, settings=settings)
            if paused_until is not None:
                return row, Outcome(row.tracked_id, error_code=error.code, next_due_at=paused_until,
                                    paused_until=paused_until)
            retry_at = now + dt.timedelta(seconds=settings.analytics_snapshot_interval_seconds)
            return row, Outcome(row.tracked_id, error_code=error.code,
                                next_due_at=retry_at if error.transient else bucket_end)
        except Exception:  # noqa: BLE001 - a connector bug must not stop the other accounts
            logger.exception("follower reading failed unexpectedly", extra={"account_id": str(row.id)})
            retry_at = now + dt.timedelta(seconds=settings.analytics_snapshot_interval_seconds)
            return row, Outcome(row.tracked_id, error_code="internal_error", next_due_at=retry_at)
        if reading is None:
            return row, Outcome(row.tracked_id, error_code="metrics_unsupported", next_due_at=bucket_end)
        return row, Outcome(row.tracked_id, reading=reading, next_due_at=bucket_end)

    return recording.record_accounts(database, token=token, now=now, measured=_in_parallel(measure, rows, settings))
