"""Messages sent after the transaction that recorded them (cross-cutting): crisis
notifications' emails and influencer outreach (email or direct message) go out this
one way.

A message is a row recorded `queued` in its area's transaction (nothing is sent from
a request or an ingest), with the columns `Outbox` reads: `status`, `attempts`,
`last_error`, `next_attempt_at`, `sent_at` and a lease (`lease_until`, `claim_token`,
persistence.models.LeasedMixin).

1. `dispatch_due` (an area's periodic job, in the scheduler's thread) claims the
   queued rows that are due, with a lease and a token a slice (socialpub.claims), and
   hands each slice to the area's sending job through `claims.hand_out`; a slice the
   queue refused is given back at once.
2. `send_slice` (that job) takes each row of its slice in turn while the claim is
   still its own: `prepare` reads what to send in a short transaction, `deliver`
   sends it outside any transaction (a mail server or a platform may take its time),
   and the outcome is recorded under the claim: `sent`; or a failed attempt, due
   again after the backoff (`Policy`: doubling from `retry_base_seconds`, capped at
   `retry_max_seconds`, or the wait the other side asked for) until `max_attempts`
   attempts make it `failed`, the last error kept; or `failed` at once for a failure
   no retry can mend (`SendFailed(permanent=True)`, `Undeliverable`).

A job that dies mid-send leaves its claim to run out (`lease_seconds`), then the row
is attempted again: delivery is at least once (a platform that honours idempotency
keys, given the row's id, makes it once).
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import and_, or_, select

from socialpub import backoff, claims, clock
from socialpub.tenancy import parse_id

logger = logging.getLogger("socialpub.sending")

QUEUED, SENT, FAILED = "queued", "sent", "failed"
# What `record_attempt` says became of a row.
OUTCOMES = ("sent", "retrying", "failed")


@dataclass(frozen=True)
class Policy:
    """How an area retries its messages (read from its settings)."""

    max_attempts: int
    retry_base_seconds: float
    retry_max_seconds: float
    lease_seconds: int


class SendFailed(Exception):
    """One attempt failed. `permanent`: retrying cannot mend it (the row fails at once);
    `retry_after`: the seconds the other side asked to wait (a platform's rate limit)."""

    def __init__(self, message: str, *, permanent: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.permanent = permanent
        self.retry_after = retry_after


class Undeliverable(SendFailed):
    """Found while preparing: there is nothing to send it with or to any more (the
    account is gone, the address was removed). The row fails at once."""

    def __init__(self, message: str):
        super().__init__(message, permanent=True)


@dataclass(frozen=True)
class Outbox:
    """An area's table of messages, and how its dispatcher hands them out."""

    model: type
    job_name: str
    # Rows claimed per dispatch, and per sending job.
    batch: int = 200
    slice_size: int = 20

    def due(self, now: dt.datetime, *only):
        model = self.model
        return and_(
            model.status == QUEUED,
            model.next_attempt_at <= now,
            or_(model.lease_until.is_(None), model.lease_until < now),
            *only,
        )


def dispatch_due(outbox: Outbox, *, database, queue, run: Callable, policy: Policy, only=(),
                 now: dt.datetime | None = None) -> int:
    """Claims due rows (those also matching `only`, criteria of what can be sent now)
    in slices and hands each to `run(token, ids)`; returns how many it handed out."""
    now = now or clock.now()
    model = outbox.model
    values = {model.lease_until: now + dt.timedelta(seconds=policy.lease_seconds)}
    due = outbox.due(now, *only)
    slices = []
    with database.transaction() as session:
        ids = claims.due_ids(session, model, due, order_by=model.next_attempt_at, limit=outbox.batch, of=model)
        for start in range(0, len(ids), outbox.slice_size):
            chunk, token = ids[start:start + outbox.slice_size], str(uuid.uuid4())
            taken = set(claims.set_where_still(session, model, chunk, due, {**values, model.claim_token: token}))
            if taken:
                slices.append((token, [each for each in chunk if each in taken]))
    if not slices:
        return 0
    return claims.hand_out(database=database, queue=queue, run=run, model=model, slices=slices,
                           job_name=outbox.job_name)


def retry_delay(attempts: int, policy: Policy, *, retry_after: float | None = None) -> dt.timedelta:
    return dt.timedelta(seconds=backoff.delay_seconds(
        attempts, base=policy.retry_base_seconds, maximum=policy.retry_max_seconds, retry_after=retry_after,
    ))


def record_attempt(row, failure: SendFailed | None, *, now: dt.datetime, policy: Policy) -> str:
    """The outcome of one attempt, on the row; returns what became of it (`sent`,
    `retrying` or `failed`)."""
    row.attempts = (row.attempts or 0) + 1
    row.lease_until = row.claim_token = None
    if failure is None:
        row.status, row.sent_at = SENT, now
        row.next_attempt_at = row.last_error = None
        return "sent"
    row.last_error = failure.message[:1000]
    if failure.permanent or row.attempts >= policy.max_attempts:
        row.status, row.next_attempt_at = FAILED, None
        return "failed"
    row.next_attempt_at = now + retry_delay(row.attempts, policy, retry_after=failure.retry_after)
    return "retrying"


def _held(session, model, row_id, token):
    return session.execute(claims.lock_rows(session, select(model).where(
        model.id == row_id, model.claim_token == token, model.status == QUEUED,
    ))).scalar_one_or_none()


def send_slice(outbox: Outbox, *, database, policy: Policy, token: str, ids, prepare: Callable,
               deliver: Callable, recorded: Callable | None = None) -> dict[str, int]:
    """Sends the rows held under `token`, one at a time; returns how many were sent,
    are to be retried, and failed.

    `prepare(session, row)` returns what `deliver` needs (read under the claim, in a
    short transaction), None to give the claim back and leave the row as it was (it
    cannot be sent now), or raises `Undeliverable`. `deliver(payload)` sends it and
    returns the receipt, or raises `SendFailed`. `recorded(session, row, outcome,
    receipt)` adds what the area keeps of an outcome (a history entry, an external id)
    in the transaction that records it."""
    model = outbox.model
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for row_id in [parsed for parsed in (parse_id(each) for each in ids) if parsed is not None]:
        failure, receipt = None, None
        with database.transaction() as session:
            row = _held(session, model, row_id, token)
            if row is None:
                continue  # sent, removed, or our lease ran out and another job took it
            try:
                payload = prepare(session, row)
            except Undeliverable as exc:
                payload, failure = None, exc
            if failure is not None:
                outcome = record_attempt(row, failure, now=clock.now(), policy=policy)
                if recorded is not None:
                    recorded(session, row, outcome, None)
                outcomes[outcome] += 1
                continue
            if payload is None:
                claims.release(session, model, row_id, token)
                continue
        # No transaction is held while the other side takes its time.
        try:
            receipt = deliver(payload)
        except SendFailed as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001 - any failure is this attempt's outcome
            logger.error("%s failed unexpectedly", outbox.job_name, exc_info=True, extra={"row_id": str(row_id)})
            failure = SendFailed(f"The message could not be sent ({exc.__class__.__name__}).")
        with database.transaction() as session:
            row = _held(session, model, row_id, token)
            if row is None:
                continue
            outcome = record_attempt(row, failure, now=clock.now(), policy=policy)
            if recorded is not None:
                recorded(session, row, outcome, receipt)
            outcomes[outcome] += 1
    return outcomes

