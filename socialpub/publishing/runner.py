"""What a publishing job does with a slice of claims: take each claim, call the
platform, record its receipt.

The job keeps several platform calls in flight (platforms take 100-1000 ms to answer;
one call after another would publish a few posts a second): it acts on a target only
while it holds the current token, calls the platform with the target's id as
idempotency key, and records the platform's receipt as soon as it arrives, before
anything else is done with that target. A job that runs twice, or after a crash,
finds the target published (or its token gone) and does nothing. This slice machinery
runs publications (publications.py) and first comments (first_comments.py).
"""
from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import datetime as dt
import itertools
import logging
import uuid
from typing import Any

from sqlalchemy import String, and_, bindparam, select, update

from persistence import plans
from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.posts import PostTarget
from persistence.types import UtcDateTime, utcnow
from socialpub import backoff, claims, clock, crypto
from socialpub.accounts import service as accounts
from socialpub.connectors.base import PlatformError, Published
from socialpub.publishing.dispatch import Kind, give_back

logger = logging.getLogger("socialpub.publishing")


def locked_target(session, target_id, *options) -> PostTarget | None:
    query = select(PostTarget).where(PostTarget.id == uuid.UUID(str(target_id))).options(*options)
    return session.execute(claims.lock_rows(session, query, of=PostTarget)).scalar_one_or_none()


@dataclasses.dataclass(frozen=True)
class Taken:
    """A claim this run took, and what its platform call needs."""

    target_id: uuid.UUID
    run_token: str
    attempt: int
    post_id: uuid.UUID
    platform: str
    account: Any  # a row of ACCOUNT_COLUMNS: the connector and what its credentials are made of
    content: str
    parent: Published | None = None  # what a first comment replies to


class _CallsInFlight:
    """How many calls a slice has in flight, per account and per platform, against
    the settings' caps: a slice must not hammer one account, nor one platform, with
    all its calls at once."""

    def __init__(self, settings):
        self.per_account = max(1, settings.publish_concurrency_per_account)
        self.per_platform = max(1, settings.publish_concurrency_per_platform)
        self.by_account: collections.Counter = collections.Counter()
        self.by_platform: collections.Counter = collections.Counter()

    def has_room(self, account_id, platform) -> bool:
        return self.by_account[account_id] < self.per_account and self.by_platform[platform] < self.per_platform

    def add(self, taken: Taken) -> None:
        self.by_account[taken.account.id] += 1
        self.by_platform[taken.platform] += 1

    def remove(self, taken: Taken) -> None:
        self.by_account[taken.account.id] -= 1
        self.by_platform[taken.platform] -= 1


def run_slice(
    *, database, settings, kind: Kind, token, target_ids, take, ready, record, prepare=None, settle=None, route=None
) -> dict[str, str]:
    """Works through one slice of claims with up to publish_concurrency platform calls
    in flight (at most publish_concurrency_per_account on one account and
    publish_concurrency_per_platform on one platform): take a claim, get its call
    ready, call the platform on the slice's thread pool, record the outcome as soon as
    the call returns. Then settles the posts whose targets it recorded. Returns what
    happened to each target.

    Only the calls run on the pool; every database transaction runs on the thread
    that runs the slice (sessions are not thread-safe). Each outcome is committed in
    a transaction of its own, as soon as its call returns and before anything else is
    done with its target: a platform without idempotency keys must never have a
    receipt waiting behind slower calls, nor lose one to whatever goes wrong with
    another target. The claims that take the freed room are taken in the same commit,
    several in one statement: `take(session, target_ids, token, settings, prepared)`
    returns the Taken of each target whose claim it took (None: nothing to call).
    A claim is taken (its run token set) before its call, and no more claims are held
    than there can be calls in flight: a job killed mid-slice has made at most
    publish_concurrency calls it did not record.

    A target whose call cannot even be made (its account unusable, its credentials
    unreadable) fails for good, recorded like a refusal: trying again would meet the
    same, and the rest of the slice carries on. `prepare` reads what the calls need
    for the whole slice at once; `route(prepared, target_id)` says, if it can, which
    (account id, platform) a target goes through, so that a claim is not taken while
    its account or platform has no room.

    A slice takes claims for a quarter of a lease at most, then gives the rest back to
    the next dispatch: the claims it has not reached keep the lease they were
    dispatched with (renewed while the job waited: at least half a lease left), and a
    slow platform must not hold them past it.

    Settling the posts once for the slice costs a fraction of settling them after each
    receipt. A job that dies before then leaves them to the dispatcher's sweep
    (settle_unsettled_posts)."""
    outcomes: dict[str, str] = {}
    remaining = dict.fromkeys(uuid.UUID(str(target_id)) for target_id in target_ids)  # in order
    stop_taking_at = clock.monotonic() + settings.publish_lease_seconds / 4
    concurrency = max(1, settings.publish_concurrency)
    refill = max(1, concurrency // 4)
    calls = _CallsInFlight(settings)
    waiting: list[Taken] = []  # taken, their account or platform full: called once it has room
    in_flight: dict[concurrent.futures.Future, Taken] = {}
    recorded_posts = []
    failed_to_take: list[Exception] = []
    prepared = None

    def routable(target_id) -> bool:
        known = route(prepared, target_id) if route is not None else None
        return known is None or calls.has_room(*known)

    def take_more(session) -> None:
        """Takes claims while the slice has room for their calls, several in one
        statement behind one savepoint: whatever goes wrong taking them undoes only
        those takes (and stops the taking), and what else the transaction holds, a
        receipt, still commits. While calls wait for room on their account, more are
        taken only once a quarter of the slice's room is free (`refill`): taken one by
        one as each call returns, they would cost a statement and a savepoint each."""
        while remaining and not failed_to_take:
            room = concurrency - len(in_flight) - len(waiting)
            if room <= 0 or (waiting and room < refill):
                return
            if clock.monotonic() > stop_taking_at:
                give_back(session, kind, list(remaining), {token})
                outcomes.update((str(target_id), "given back") for target_id in remaining)
                remaining.clear()
                return
            target_ids = list(itertools.islice((target_id for target_id in remaining if routable(target_id)), room))
            if not target_ids:
                return  # each account or platform left is full: taken once a call returns
            try:
                with session.begin_nested():
                    taken = take(session, target_ids, token, settings, prepared)
            except Exception as exc:  # noqa: BLE001 - raised again once the calls in flight are recorded
                failed_to_take.append(exc)
                return
            for target_id in target_ids:
                del remaining[target_id]
                if taken.get(target_id) is None:
                    outcomes[str(target_id)] = "skipped"
                else:
                    waiting.append(taken[target_id])

    def record_outcome(taken: Taken, receipt, error) -> None:
        try:
            with database.transaction() as session:
                outcome = outcomes[str(taken.target_id)] = record(session, taken, receipt, error, settings)
                take_more(session)
        except Exception:  # noqa: BLE001 - one target's outcome must not stop the slice
            # Its claim stays with this run until the lease runs out; then the
            # dispatcher hands it out again (the platform, called again with the same
            # idempotency key, gives the same receipt), and fails it once its runs have
            # stopped short publish_max_attempts times. A database that is gone fails
            # the next take as well, and ends the job once the calls in flight are in.
            logger.exception("could not record a platform call's outcome", extra={"target_id": str(taken.target_id)})
            outcomes[str(taken.target_id)] = "unrecorded"
            try:
                with database.transaction() as session:
                    take_more(session)
            except Exception as exc:  # noqa: BLE001 - raised again once the calls in flight are recorded
                failed_to_take.append(exc)
            return
        if outcome != "deleted":
            recorded_posts.append(taken.post_id)

    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="socialpub-call") as pool:
        try:
            with database.transaction() as session:
                prepared = prepare(session, list(remaining)) if prepare is not None else None
                take_more(session)
            while True:
                for taken in list(waiting):
                    if calls.has_room(taken.account.id, taken.platform):
                        waiting.remove(taken)
                        calls.add(taken)
                        in_flight[pool.submit(_call_platform, ready, taken)] = taken
                if not in_flight:
                    break  # nothing waits either: with no call in flight, every account has room
                done, _ = concurrent.futures.wait(in_flight, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    taken = in_flight.pop(future)
                    calls.remove(taken)
                    # A call that ended the worker (BaseException) ends the slice here:
                    # nothing more is recorded, as when the process is killed.
                    receipt, error = future.result()
                    record_outcome(taken, receipt, error)
        except BaseException:
            # The calls not yet started never start; those in flight finish (leaving the
            # pool) unrecorded: their claims go out again when their leases run out.
            for future in in_flight:
                future.cancel()
            raise
    if failed_to_take:
        raise failed_to_take[0]
    if settle is not None and recorded_posts:
        with database.transaction() as session:
            settle(session, recorded_posts)
    return outcomes


# What a job runs for every target, built once with bound parameters (named b_...,
# apart from the columns): building a statement costs more CPU than running it. They
# run on the session's connection (see execute).

def take_statement(kind: Kind, *returning):
    """Takes the claims among a list of targets that still hold the dispatcher's
    token, for this run: a duplicate of the job then finds no token. Returns each
    taken target's id and attempt, then `returning`."""
    return (
        update(PostTarget)
        .where(
            # Reached by their ids alone (persistence.plans): every claim of the
            # kind ever taken has an entry under its status until a vacuum.
            PostTarget.id.in_(bindparam("b_target_ids", expanding=True)),
            plans.checked_on_each(and_(kind.status == kind.claimed, kind.token == bindparam("b_token"))),
        )
        .values({
            kind.token: bindparam("b_run_token", type_=String()),
            kind.attempts: kind.attempts + 1,
            kind.lease: bindparam("b_lease_until", type_=UtcDateTime()),
        })
        .returning(PostTarget.id, kind.attempts, *returning)
    )


# The account's connector and what accounts.credentials_for reads.
ACCOUNT_COLUMNS = (
    ConnectedAccount.id, ConnectedAccount.platform, ConnectedAccount.handle, ConnectedAccount.options,
    ConnectedAccount.secrets_encrypted, ConnectedAccount.connector, ConnectedAccount.status,
)
def execute(session, statement, parameters):
    """Runs a statement that loads no objects on the session's connection: through the
    session, the ORM's handling of an UPDATE costs more than the statement itself."""
    return session.connection().execute(statement, parameters)


def take(session, statement, target_ids, token, settings) -> dict[uuid.UUID, tuple]:
    """Takes these targets' claims (take_statement), under one run token: for each
    target taken, (run token, attempt, *returning)."""
    run_token = str(uuid.uuid4())
    lease_until = utcnow() + dt.timedelta(seconds=settings.publish_lease_seconds)
    rows = execute(
        session, statement,
        {"b_target_ids": list(target_ids), "b_token": token, "b_run_token": run_token, "b_lease_until": lease_until},
    )
    return {row[0]: (run_token, *row[1:]) for row in rows}


# Why an account that is not active gets nothing: the user connects an account again
# and publishes again, which retries the failed targets through the active accounts.
_ACCOUNT_UNUSABLE = {
    AccountStatus.DISABLED: (
        "account_disconnected", "The {platform} account {handle} was disconnected; connect an account on {platform} "
        "and publish the post again.",
    ),
    AccountStatus.NEEDS_REAUTH: (
        "account_needs_reauth", "The {platform} account {handle} needs to be connected again (the platform refused "
        "its token); connect it again and publish the post again.",
    ),
}


def connection(connector_for, taken: Taken):
    """The connector and credentials a target's call goes through, or the PlatformError
    (final) that says why there are none."""
    account = taken.account
    if account.status != AccountStatus.ACTIVE:
        code, message = _ACCOUNT_UNUSABLE[account.status]
        raise PlatformError(code, message.format(platform=account.platform, handle=account.handle), transient=False)
    try:
        connector = connector_for(account.connector)
    except ValueError as exc:
        raise PlatformError(
            "connector_unavailable", f"Account {account.handle} uses a connector this service lacks: {exc}.", transient=False
        ) from None
    try:
        credentials = accounts.credentials_for(account)
    except crypto.UndecryptableSecret:
        raise PlatformError(
            "account_credentials_unreadable",
            f"The credentials of account {account.handle} cannot be decrypted with the encryption keys this "
            "service runs with (SOCIALPUB_ENCRYPTION_KEYS); restore the key they were written with, or connect "
            "the account again.",
            transient=False,
        ) from None
    return connector, credentials


def _call_platform(ready, taken: Taken) -> tuple[Published | None, PlatformError | None]:
    """The platform's receipt, or the error to record; never raises."""
    try:
        call = ready(taken)
    except PlatformError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - one target's bad data must not stop the slice
        logger.exception("could not prepare a platform call", extra={"target_id": str(taken.target_id)})
        return None, PlatformError(
            "call_preparation_failed", f"The call to {taken.platform} could not be prepared: {exc.__class__.__name__}.",
            transient=False,
        )
    try:
        return call(), None
    except PlatformError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - a connector bug must not lose the target
        logger.exception("connector failed unexpectedly", extra={"target_id": str(taken.target_id)})
        return None, PlatformError("internal_error", f"Unexpected connector failure: {exc.__class__.__name__}", transient=True)


def record_failure(target: PostTarget, taken: Taken, error: PlatformError, settings, kind: Kind) -> str:
    """Records a call that failed on the target's columns of this kind, unless a later
    run holds its claim now ("superseded"): a transient failure is due again after
    the backoff ("retrying"), until publish_max_attempts; any other fails for good
    ("failed"). A refused token marks the account as needing to be connected again,
    unless it can be refreshed: then the target waits for the refresh, as after a
    transient failure."""

    def get(name):
        return getattr(target, kind.prefix + name)

    def put(name, value):
        setattr(target, kind.prefix + name, value)

    if get("claim_token") != taken.run_token or get("status") != kind.claimed:
        return "superseded"
    put("error_code", error.code)
    put("error_message", error.message[:2000])
    put("lease_until", None)
    put("claim_token", None)
    refreshing = error.auth_failed and accounts.token_refused(target.account, error.message)
    if (error.transient or refreshing) and taken.attempt < settings.publish_max_attempts:
        put("status", kind.pending)
        # Jittered before it is capped: once past retry_max_seconds, every retry waits
        # exactly that long (and a target gives up after a few attempts anyway).
        delay = backoff.delay_seconds(
            taken.attempt, base=settings.retry_base_seconds, maximum=settings.retry_max_seconds,
            retry_after=error.retry_after, jitter_before_cap=True,
        )
        put("next_attempt_at", utcnow() + dt.timedelta(seconds=delay))
    else:
        put("status", kind.failed)
    return "retrying" if get("status") == kind.pending else "failed"
