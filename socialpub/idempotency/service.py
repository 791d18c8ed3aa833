"""Idempotency-Key on every POST, with Stripe's semantics.

The first request's status and body are kept for 24 hours per (API key, key) and
replayed to a repeat with the same method, path and body. The same key with a
different request is 409 `idempotency_conflict`; a repeat while the first is still
running is 409 `conflict` with Retry-After. Validation failures (422) and server
failures (5xx) are not kept, so the request can be sent again once fixed. The record
lives in the database, so this holds across processes.

The key is tied to the change (Stripe's atomic phases): `begin` takes the key in a
transaction of its own (a repeat meanwhile is 409); the request then runs in one
transaction (`Database.one_commit`, socialpub.request), and its answer is stored
(`complete`) in that transaction, before the answer leaves: the change and its stored
answer commit together or not at all. A repeat of a committed request replays it,
never runs it again; a process that died before the commit changed nothing, and the
repeat after the key's lock (`idempotency_lock_seconds`) runs the request afresh.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from persistence.idempotency import IdempotencyRecord
from persistence.types import utcnow
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope

HEADER = "idempotency-key"
KEEP_FOR = dt.timedelta(hours=24)
VALID_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")
# What an answer says in its headers beyond the body and status: replayed with them.
REPLAYED_HEADERS = ("content-type", "location", "signal-duplicate")


@dataclass(frozen=True)
class Replay:
    status: int
    headers: dict
    body: bytes


def check_key(value: str) -> str:
    if not VALID_KEY.match(value or ""):
        raise ApiError.field_invalid(
            "header.Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces."
        )
    return value


def fingerprint(method: str, path: str, query: bytes, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), query or b"", body or b""):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def begin(*, database, principal, key: str, request_fingerprint: str, lock_seconds: float = 60,
          now: dt.datetime | None = None):
    """Replay of the stored response, or the id of a new in-progress record that
    this request now owns (a request still running after `lock_seconds` is taken to
    have died with its process). Raises the 409s."""
    now = now or utcnow()
    lock_for = dt.timedelta(seconds=lock_seconds)
    with database.transaction() as session:
        scope = TenantScope.of(session, principal)
        query = scope.select(
            IdempotencyRecord, IdempotencyRecord.api_key_id == principal.api_key_id, IdempotencyRecord.key == key
        )
        record = session.execute(query).scalar_one_or_none()
        if record is not None and record.expires_at <= now:
            session.delete(record)
            session.flush()
            record = None
        if record is None:
            record = scope.add(
                IdempotencyRecord(
                    api_key_id=principal.api_key_id, key=key, fingerprint=request_fingerprint, status="in_progress",
                    locked_until=now + lock_for, expires_at=now + KEEP_FOR,
                )
            )
            try:
                session.flush()
            except IntegrityError:
                session.rollback()
                raise _in_progress() from None
            return record.id
        if record.fingerprint != request_fingerprint:
            raise ApiError(
                409, "idempotency_conflict",
                "This Idempotency-Key was already used with a different request; use a new key for a new request.",
            )
        if record.status == "completed":
            return Replay(record.response_status, dict(record.response_headers or {}), record.response_body or b"")
        if record.locked_until and record.locked_until > now:
            raise _in_progress()
        # The first request's process died mid-way: this one takes over.
        record.locked_until = now + lock_for
        return record.id


def _in_progress() -> ApiError:
    error = ApiError.conflict("A request with this Idempotency-Key is still being processed; retry shortly.")
    error.headers["Retry-After"] = "1"
    return error


def kept(status: int) -> bool:
    """Whether an answer is kept for replay: not a validation failure nor a server's."""
    return status != 422 and status < 500


def complete(session, *, record_id, status: int, headers: dict, body: bytes) -> None:
    """Keeps the answer for replay, in the caller's transaction (the one that made the
    change it answers), or lets the key go when it is not kept."""
    record = session.get(IdempotencyRecord, record_id)
    if record is None:
        return
    if not kept(status):
        session.delete(record)
        return
    record.status = "completed"
    record.response_status = status
    record.response_headers = {name: value for name, value in headers.items() if name in REPLAYED_HEADERS}
    record.response_body = body
    record.locked_until = None


def finish(*, database, record_id, status: int, headers: dict, body: bytes) -> None:
    """`complete` in a transaction of its own: for an answer that changed nothing (a
    refusal), or whose change was rolled back."""
    with database.transaction() as session:
        complete(session, record_id=record_id, status=status, headers=headers, body=body)


def abandon(*, database, record_id) -> None:
    with database.transaction() as session:
        session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id == record_id))


def purge_expired(*, session, now: dt.datetime | None = None) -> int:
    result = session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.expires_at <= (now or utcnow())))
    session.commit()
    return result.rowcount
