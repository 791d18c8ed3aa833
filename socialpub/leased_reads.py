"""The one claim–read–record loop (cross-cutting) of the areas that read platforms
on their own, a row at a time: listening's polls of a monitor's searches,
competitors' refreshes of a competitor's profiles. Built on `claims`.

1. `LeasedReads.dispatch` (periodic): leases the rows due (a lease and a token,
   `claims.claim`) and hands each to one job (`claims.hand_out`).
2. `LeasedReads.run` (the job): in one transaction, while the row is still leased to
   the job's token, plans the row's reads; reads each source with no transaction
   open (`read`: a source that fails keeps its error, and the others go on); then, in
   one transaction while the lease is still the job's, records what was read. A
   recording that fails is recorded again as the pass's failure, nothing of it kept.
3. What every recording does: `settle` keeps each source's reading on its row (the
   cursor moved on, or the error kept; a source that pauses pauses with backoff) and
   `finish` closes the pass on the row (when it ran, its sources' errors, when it is
   due again, the lease given back).
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from typing import Callable

import httpx
from sqlalchemy import or_, select

from socialpub import backoff, claims
from socialpub.connectors.base import PlatformError
from socialpub.outbound import GuardedClient
from socialpub.tenancy import parse_id

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_CURSOR_CHARS = 500
MAX_ERROR_CHARS = 2000
MAX_ERRORS_CHARS = 4000


def client_for(timeout_seconds: float) -> GuardedClient:
    """The guarded outbound client a pass reads through: each request, and all of it,
    within `timeout_seconds`; an answer at most MAX_RESPONSE_BYTES."""
    return GuardedClient(timeout=httpx.Timeout(timeout_seconds, connect=min(5.0, timeout_seconds)),
                         total_timeout=timeout_seconds, max_bytes=MAX_RESPONSE_BYTES)


@dataclass(kw_only=True)
class SourceRead:
    """One source's reading in a pass (an area's own reading adds what it read): the
    cursor to keep, or what went wrong and the wait the platform asked for."""

    cursor: str | None = None
    error: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class LeasedReads:
    """An area's loop over `model` (a row with `lease_until` and `claim_token`):
    `job_name` names its jobs, `what` and `id_name` its log lines."""

    model: type
    job_name: str
    logger: logging.Logger
    what: str  # "listening poll"
    id_name: str  # "monitor_id"

    def free(self, now):
        """The rows no pass holds."""
        return or_(self.model.lease_until.is_(None), self.model.lease_until < now)

    def lease(self, session, due, *, lease_seconds: float, now, order_by=None, limit: int | None = None):
        """Leases the rows matching `due` (up to `limit`, in `order_by` order) under a
        new token: (the token, the ids leased)."""
        token = str(uuid.uuid4())
        claimed = claims.claim(
            session, self.model, due,
            values={"lease_until": now + dt.timedelta(seconds=lease_seconds), "claim_token": token},
            order_by=order_by, limit=limit, of=self.model,
        )
        return token, claimed

    def dispatch(self, *, database, queue, run: Callable, due, order_by, lease_seconds: float, batch_size: int,
                 now) -> int:
        """Hands each row due to one `run(record_id, token)` job; how many were queued."""
        with database.transaction() as session:
            token, claimed = self.lease(session, due, lease_seconds=lease_seconds, now=now, order_by=order_by,
                                        limit=batch_size)
        return claims.hand_out(database=database, queue=queue, run=run, model=self.model, claimed=claimed,
                               token=token, job_name=self.job_name)

    def held(self, session, record_id, token: str):
        """The row, locked, while it is still leased to `token`; else None."""
        row = session.execute(
            claims.lock_rows(session, select(self.model).where(self.model.id == record_id))
        ).scalar_one_or_none()
        return row if row is not None and row.claim_token == token else None

    def run(self, *, database, record_id, token: str, plan: Callable, read: Callable, record: Callable,
            failure_of: Callable[[Exception], str]) -> dict:
        """One pass over the row `record_id` leased with `token`. `plan(session, row)`
        gives the sources to read (or a result that ends the pass at once); `read(each)`
        reads one; `record(session, row, planned, failure)` records them (`failure`:
        None, or `failure_of(exc)` when recording them failed). {"status": "lost"} when
        the lease is no longer the pass's."""
        parsed = parse_id(record_id)
        with database.transaction() as session:
            row = session.get(self.model, parsed)
            if row is None or row.claim_token != token:
                return {"status": "lost"}
            planned = plan(session, row)
        if isinstance(planned, dict):
            return planned
        for each in planned:
            read(each)
        try:
            with database.transaction() as session:
                row = self.held(session, parsed, token)
                return record(session, row, planned, None) if row is not None else {"status": "lost"}
        except Exception as exc:  # noqa: BLE001 - nothing of it was kept: recorded as the pass's failure
            self.logger.error("%s could not be recorded", self.what, exc_info=True, extra={self.id_name: str(parsed)})
            with database.transaction() as session:
                row = self.held(session, parsed, token)
                return record(session, row, planned, failure_of(exc)) if row is not None else {"status": "lost"}

    def read(self, source: SourceRead, call: Callable, *, unexpected: str, what: str, extra: dict):
        """`call()`, a platform's reading from `source.cursor`: its answer, the
        source's cursor moved on to the answer's (when it gives one). None when it
        failed, its error kept on `source` (a PlatformError's message and wait, else
        `unexpected` naming the exception's type, logged as `what` failing)."""
        try:
            found = call()
        except PlatformError as exc:
            source.error, source.retry_after = exc.message, exc.retry_after
            return None
        except Exception as exc:  # noqa: BLE001 - this source's failure; the others go on
            self.logger.error("%s failed unexpectedly", what, exc_info=True, extra=extra)
            source.error = unexpected.format(error=exc.__class__.__name__)
            return None
        source.cursor = found.cursor if found.cursor is not None else source.cursor
        return found


def settle(row, source: SourceRead, *, now=None, pause_base: float | None = None,
           pause_max: float | None = None) -> bool:
    """Keeps a source's reading on its row; True when it failed. A source read moves
    its cursor on (when the reading gave one) and clears its error; one that failed
    keeps its cursor and records its error. A row that pauses (`failures`,
    `paused_until`; `pause_base` given) is paused after a failure for
    `backoff.delay_seconds` (`pause_base` doubling with each failure in a row, at most
    `pause_max`, or the platform's wait) from `now`, and unpaused by a success."""
    pauses = pause_base is not None
    if source.error is None:
        row.cursor = source.cursor[:MAX_CURSOR_CHARS] if source.cursor else row.cursor
        row.last_error = None
        if pauses:
            row.failures, row.paused_until = 0, None
        return False
    row.last_error = source.error[:MAX_ERROR_CHARS]
    if pauses:
        row.failures += 1
        pause = backoff.delay_seconds(row.failures, base=pause_base, maximum=pause_max, retry_after=source.retry_after)
        row.paused_until = now + dt.timedelta(seconds=pause)
    return True


def finish(row, *, now, errors: list[str], failure: str | None, interval_seconds: float, ran_at: str,
           due_at: str) -> None:
    """Closes a pass on its row: `ran_at` now, its error the pass's `failure` or its
    sources' `errors`, `due_at` one interval later, its lease given back."""
    setattr(row, ran_at, now)
    row.last_error = failure or ("; ".join(errors)[:MAX_ERRORS_CHARS] if errors else None)
    setattr(row, due_at, now + dt.timedelta(seconds=interval_seconds))
    row.lease_until = row.claim_token = None
