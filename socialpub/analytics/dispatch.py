"""The dispatcher: which targets and accounts are tracked and when they are due, and
handing what is due to the queue, a job per slice of claims.

Targets are enrolled (a TrackedPost, and a TrackedAccount for their account) two ways,
both insert-if-new: `enrol_targets`, when a target's publication is recorded, in that
transaction; and `enrol`, the sweep of the targets published in the last 90 days on
connectors that report metrics, which catches whatever the first missed. A row is due
at once when enrolled, then once per time bucket: hourly for a target's first 48
hours, daily after; an account's followers once per UTC day.

`claim_and_hand_out` claims due rows with a lease and a claim token (socialpub.claims),
one token per slice, and hands each slice to its job through `claims.hand_out`: a
slice the queue refused is given back at once. The measuring and recording of a slice
are runner.py's and recording.py's.

The jobs it enqueues are given to it by the jobs module that runs it: the code a job
runs never imports the jobs.

This is system work across every workspace: it reads targets and accounts by id, and
every row it writes carries the workspace and mode of the target or account measured.
"""
from __future__ import annotations

import datetime as dt
import uuid
from typing import Callable

from sqlalchemy import and_, exists, func, or_, select

from persistence import plans
from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.analytics import TrackedAccount, TrackedPost
from persistence.posts import Post, PostTarget, TargetStatus
from socialpub import claims, clock
from socialpub.connectors.registry import CONNECTORS
from socialpub.platforms import MEDIA_ONLY

TRACKED_FOR = dt.timedelta(days=90)
HOURLY_FOR = dt.timedelta(hours=48)
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)
ENROL_BATCH = 1000
# The prefix of the id of each job the dispatcher queues: "analytics-<token>".
JOB_NAME = "analytics"


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


# --- enrolment ------------------------------------------------------------------------

_TARGET_COLUMNS = (
    PostTarget.id, PostTarget.post_id, PostTarget.account_id, PostTarget.platform, PostTarget.published_at,
    PostTarget.workspace_id, PostTarget.livemode, func.length(Post.content),
)


def _tracked_post(row, *, now: dt.datetime) -> dict:
    target_id, post_id, account_id, platform, published_at, workspace_id, livemode, length = row
    return dict(
        id=uuid.uuid4(), target_id=target_id, post_id=post_id, account_id=account_id, platform=platform,
        published_at=published_at, published_day=published_at.date(), content_length=length or 0,
        likes=0, comments=0, shares=0, engagements=0, rated_engagements=0, next_due_at=now,
        workspace_id=workspace_id, livemode=livemode, created_at=now, updated_at=now,
    )


def _tracked_account(account_id, platform, workspace_id, livemode, *, now: dt.datetime) -> dict:
    return dict(
        id=uuid.uuid4(), account_id=account_id, platform=platform, next_due_at=now,
        workspace_id=workspace_id, livemode=livemode, created_at=now, updated_at=now,
    )


def _insert_accounts(session, rows: list[dict]) -> None:
    # In the order of their ids: two transactions enrolling the same new accounts
    # wait for each other in one order, never in a circle.
    rows = sorted(rows, key=lambda row: str(row["account_id"]))
    claims.insert_new(session, TrackedAccount, rows, unique=["account_id"], returning=TrackedAccount.id)


def enrol_targets(session, target_ids, *, now: dt.datetime) -> int:
    """Starts tracking these targets, and their accounts, due at once: in the caller's
    transaction (nothing is committed), a row already tracked left as it is. A target
    not published, published more than 90 days ago, or on a connector that reports no
    metrics is skipped. Three statements at most, whatever else is tracked: cheap
    enough for the transaction that records a publication. Returns how many targets
    it enrolled."""
    ids = sorted({uuid.UUID(str(target_id)) for target_id in target_ids}, key=str)
    if not ids:
        return 0
    account_tracked = exists().where(TrackedAccount.account_id == PostTarget.account_id)
    rows = session.execute(
        select(*_TARGET_COLUMNS, ConnectedAccount.platform.label("account_platform"), account_tracked.label("tracked"))
        .join(Post, Post.id == PostTarget.post_id)
        .join(ConnectedAccount, ConnectedAccount.id == PostTarget.account_id)
        .where(
            # Reached by their ids alone, whatever else is published (persistence.plans).
            PostTarget.id.in_(ids),
            plans.checked_on_each(and_(
                PostTarget.status == TargetStatus.PUBLISHED,
                PostTarget.published_at >= now - TRACKED_FOR,
                PostTarget.external_id.is_not(None),
            )),
            ConnectedAccount.connector.in_(metrics_connectors()),
        )
        .order_by(PostTarget.id)
    ).all()
    if not rows:
        return 0
    enrolled = claims.insert_new(
        session, TrackedPost, [_tracked_post(row[:len(_TARGET_COLUMNS)], now=now) for row in rows],
        unique=["target_id"], returning=TrackedPost.id,
    )
    accounts = {
        row.account_id: _tracked_account(row.account_id, row.account_platform, row.workspace_id, row.livemode, now=now)
        for row in rows if not row.tracked
    }
    _insert_accounts(session, list(accounts.values()))
    return len(enrolled)


def enrol(session, *, now: dt.datetime, limit: int) -> int:
    """The sweep: starts tracking published targets (and their accounts) not tracked
    yet, up to `limit` targets. Returns how many targets it enrolled."""
    connectors = metrics_connectors()
    untracked = (
        select(*_TARGET_COLUMNS)
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
    rows = [_tracked_post(row, now=now) for row in session.execute(untracked).all()]
    enrolled = 0
    for start in range(0, len(rows), ENROL_BATCH):
        enrolled += len(claims.insert_new(
            session, TrackedPost, rows[start:start + ENROL_BATCH], unique=["target_id"], returning=TrackedPost.id,
        ))
    accounts = session.execute(
        select(ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.workspace_id, ConnectedAccount.livemode)
        .where(
            ConnectedAccount.connector.in_(connectors),
            or_(
                exists().where(TrackedPost.account_id == ConnectedAccount.id),
                # A live account of a platform that takes no post from this API
                # (Instagram, TikTok, YouTube, Pinterest) is connected for its followers:
                # measured from the start, while active.
                and_(ConnectedAccount.platform.in_(MEDIA_ONLY), ConnectedAccount.livemode.is_(True),
                     ConnectedAccount.status == AccountStatus.ACTIVE),
            ),
            ~exists().where(TrackedAccount.account_id == ConnectedAccount.id),
        )
    ).all()
    _insert_accounts(session, [
        _tracked_account(account_id, platform, workspace_id, livemode, now=now)
        for account_id, platform, workspace_id, livemode in accounts
    ])
    return enrolled


# --- claims -----------------------------------------------------------------------------


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
    (target slices, account slices), each a list of (token, ids). Both start from
    the index on next_due_at: cheap when little is due."""
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


# --- handing out ------------------------------------------------------------------------


def claim_and_hand_out(*, database, queue, settings, post_job: Callable, account_job: Callable, now=None) -> int:
    """Claims what is due and queues `account_job(token, ids)` and `post_job(token,
    ids)` for each slice, accounts first; returns how many targets and accounts it
    handed out. What the queue refused is given back at once (claims.hand_out)."""
    now = now or clock.now()
    with database.transaction() as session:
        post_slices, account_slices = claim_due(session, now=now, settings=settings)
    return _hand_out(database=database, queue=queue, post_job=post_job, account_job=account_job,
                     post_slices=post_slices, account_slices=account_slices)


def dispatch(*, database, queue, settings, post_job: Callable, account_job: Callable, now=None) -> int:
    """The sweep: enrols published targets not tracked yet, then claims what is due
    and hands it out as claim_and_hand_out does; returns how many targets and
    accounts it handed out."""
    now = now or clock.now()
    with database.transaction() as session:
        enrol(session, now=now, limit=settings.analytics_batch_size)
        post_slices, account_slices = claim_due(session, now=now, settings=settings)
    return _hand_out(database=database, queue=queue, post_job=post_job, account_job=account_job,
                     post_slices=post_slices, account_slices=account_slices)


def _hand_out(*, database, queue, post_job, account_job, post_slices, account_slices) -> int:
    handed = claims.hand_out(
        database=database, queue=queue, run=account_job, model=TrackedAccount, slices=account_slices, job_name=JOB_NAME,
    )
    return handed + claims.hand_out(
        database=database, queue=queue, run=post_job, model=TrackedPost, slices=post_slices, job_name=JOB_NAME,
    )
