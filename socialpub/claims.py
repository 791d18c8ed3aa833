"""The one way to take due rows with a lease (cross-cutting): publishing targets,
bulk operations, webhook endpoints, feeds and analytics rows are all claimed through
here, and handed to the queue through `hand_out`.

Claiming is two statements: lock the candidate ids, then update exactly those that
are still due. On PostgreSQL the candidates are locked `FOR UPDATE SKIP LOCKED`, so
two claimers never wait on each other and never take the same row. SQLite has no row
locks: every write transaction there already holds the database's write lock (the
engine begins them IMMEDIATE), so the conditional update is the claim. The dialect
is checked here and nowhere else. `hold` is the same for work that is not a row: a
named lock for the rest of the transaction.
"""
from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Sequence

from sqlalchemy import String, bindparam, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable, Select

from persistence import plans

logger = logging.getLogger("socialpub.claims")


def has_row_locks(session: Session) -> bool:
    return session.bind.dialect.name == "postgresql"


def lock_rows(session: Session, query: Select, *, skip_locked: bool = False, of=None) -> Select:
    """`query` taking row locks where the database has them (a no-op on SQLite)."""
    if not has_row_locks(session):
        return query
    return query.with_for_update(skip_locked=skip_locked, of=of)


def hold(session: Session, name: str, *, shared: bool = False) -> None:
    """Takes the lock called `name` until the transaction ends, waiting for it:
    holders of a shared one go together, an exclusive one waits for them and they for
    it. PostgreSQL's advisory locks (two names may share one, which only makes them
    wait); a no-op on SQLite, where a write transaction already excludes every other."""
    if not has_row_locks(session):
        return
    take = func.pg_advisory_xact_lock_shared if shared else func.pg_advisory_xact_lock
    session.execute(select(take(func.hashtextextended(name, 0))))


_BITMAPS_OFF = text("SELECT current_setting('enable_bitmapscan'), set_config('enable_bitmapscan', 'off', true)")
_BITMAPS_AS = text("SELECT set_config('enable_bitmapscan', :value, true)")


def due_ids(session: Session, model, due, *, order_by=None, limit: int | None = None, of=None) -> list:
    """The ids of `model` rows matching `due`, locked without waiting for rows another
    claimer holds (those are skipped).

    The first `limit` in `order_by` order are read along an index in that order, when
    one holds it, and the read stops there: PostgreSQL would otherwise read every due
    row through a bitmap and sort them whenever it expects few due rows (with no
    statistics of the table, or statistics older than a burst), a cost growing with
    the backlog."""
    query = select(model.id).where(due)
    if order_by is not None:
        query = query.order_by(order_by)
    if limit is not None:
        query = query.limit(limit)
    query = lock_rows(session, query, skip_locked=True, of=of)
    if order_by is None or limit is None or not has_row_locks(session):
        return list(session.execute(query).scalars())
    # For this read alone (a failed transaction is rolled back, its setting with it).
    before = session.execute(_BITMAPS_OFF).scalar_one()
    ids = list(session.execute(query).scalars())
    session.execute(_BITMAPS_AS, {"value": before})
    return ids


def set_where_still(session: Session, model, ids, due, values: dict) -> list:
    """Sets `values` on the rows among `ids` still matching `due`; returns their ids.
    Rechecking `due` makes a row that changed since it was read simply not claimed.

    The rows are reached by their ids alone, `due` checked on each: as a plain
    condition PostgreSQL may read the rows through `due`'s own index (every due row
    of a backlog, when it has no statistics of the table yet, as in a burst on a new
    table) and keep the few among `ids`, at a cost growing with the backlog. Within
    CASE it is no index's condition."""
    if not ids:
        return []
    return list(session.execute(still_statement(model, ids, due, values)).scalars())


def still_statement(model, ids, due, values: dict):
    """`set_where_still`'s statement."""
    return (
        update(model)
        .where(model.id.in_(list(ids)), plans.checked_on_each(due))
        .values(values)
        .returning(model.id)
        .execution_options(synchronize_session=False)
    )


def claim(session: Session, model, due, *, values: dict, order_by=None, limit: int | None = None, of=None) -> list:
    """Takes up to `limit` due rows: sets `values` (a lease and a claim token) on
    them and returns their ids, in `order_by` order."""
    ids = due_ids(session, model, due, order_by=order_by, limit=limit, of=of)
    claimed = set(set_where_still(session, model, ids, due, values))
    return [row_id for row_id in ids if row_id in claimed]


def insert_new(session: Session, model, rows: list[dict], *, unique: list[str], returning) -> list:
    """Inserts the rows whose `unique` columns are not taken yet and returns
    `returning` of those it inserted (a column, or a tuple of columns: then a tuple
    a row): a row another claimer inserted first is theirs, without an error or a
    wait for either. Every row names the same columns."""
    if not rows:
        return []
    # rowcount is not reliable for such inserts; returned rows are.
    columns = returning if isinstance(returning, tuple) else (returning,)
    result = _insert_rows(session, model.__table__, rows, lambda insert: (
        insert.on_conflict_do_nothing(index_elements=unique).returning(*columns)
    ), key=("new", tuple(unique), tuple(str(column) for column in columns)))
    return [tuple(row) for row in result] if isinstance(returning, tuple) else list(result.scalars())


def insert_adding(session: Session, model, rows: list[dict], *, unique: Sequence[str], adding: Sequence[str],
                  replacing: Sequence[str] = ()) -> int:
    """Inserts `rows`; a row whose `unique` columns are taken adds its `adding` columns
    to the stored row's (and sets its `replacing` columns): counters that concurrent
    writers keep without reading them first and without losing a change. One
    statement, built once per table and sent with the rows as its parameters; callers
    send their rows in one order, so that two writers lock the rows they share in
    that order and never deadlock. Returns the rows sent."""
    if not rows:
        return 0
    table = model.__table__
    _insert_rows(session, table, rows, lambda insert: insert.on_conflict_do_update(index_elements=list(unique), set_={
        **{name: table.c[name] + insert.excluded[name] for name in adding},
        **{name: insert.excluded[name] for name in replacing},
    }), key=("adding", tuple(unique), tuple(adding), tuple(replacing)))
    return len(rows)


# -- inserting many rows in one statement ------------------------------------------------

# Statements of _insert_rows, built once per (dialect, table, columns, what the caller adds).
_INSERTS: dict[tuple, Executable] = {}


def _insert_rows(session: Session, table, rows: list[dict], finish, *, key: tuple):
    """Runs `finish(insert)` (an ON CONFLICT clause, a RETURNING) for `rows`, every row
    naming the same columns; the statement is built once per table, columns and `key`.

    On PostgreSQL the rows go as one array a column, unnested by the statement: a
    statement whose size does not grow with the rows, planned and converted once.
    SQLAlchemy's multi-row VALUES ("insertmanyvalues") would send a statement with a
    placeholder per value, which psycopg parses anew for every call (it caches only
    short statements): 200 rows of a wide table cost more to send than to insert. The
    table's Python-side defaults are filled here first, as SQLAlchemy would fill them.
    SQLite gets the table's own insert with the rows as parameters (its driver
    binds them without parsing the statement again)."""
    postgres = has_row_locks(session)
    if postgres:
        rows = _with_defaults(table, rows)
    names = tuple(rows[0])
    cache_key = (postgres, table.name, names if postgres else (), key)
    statement = _INSERTS.get(cache_key)
    if statement is None:
        if postgres:
            # One dimension: a JSON column's values are lists themselves. psycopg's
            # dialect casts each array to its type (`%(u_id)s::UUID[]`).
            arrays = [
                func.unnest(bindparam(f"u_{name}", type_=postgresql.ARRAY(_unbounded(table.c[name].type),
                                                                           dimensions=1)))
                for name in names
            ]
            insert = postgresql.insert(table).from_select(list(names), select(*arrays), include_defaults=False)
        else:
            insert = sqlite.insert(table)
        statement = _INSERTS[cache_key] = finish(insert)
    if not postgres:
        return session.execute(statement, rows)
    return session.execute(statement, {f"u_{name}": [row[name] for row in rows] for name in names})


def _unbounded(type_):
    """A column's type without its length: an array cast to VARCHAR(20)[] would cut
    a longer value silently, where the insert into the column refuses it."""
    if isinstance(type_, String) and type_.length is not None:
        type_ = copy.copy(type_)
        type_.length = None
    return type_


class _DefaultContext:
    """What a column's default callable reads of the row being inserted."""

    def __init__(self, row: dict):
        self.current_parameters = row

    def get_current_parameters(self, isolate_multiinsert_groups: bool = True) -> dict:
        return self.current_parameters


def _with_defaults(table, rows: list[dict]) -> list[dict]:
    """`rows` with the values of the columns they leave out whose default is a Python
    value or callable (an id, a created_at), in the table's column order, as
    SQLAlchemy computes them for an insert of its own. Columns with a server default,
    or none, stay out."""
    missing = [column for column in table.columns if column.name not in rows[0] and column.default is not None]
    if not missing:
        return rows
    for column in missing:
        if not (column.default.is_scalar or column.default.is_callable):
            raise TypeError(f"{table.name}.{column.name}: only Python-side defaults are filled for a bulk insert")
    filled = []
    for row in rows:
        row = dict(row)
        context = _DefaultContext(row)
        for column in missing:
            default = column.default
            row[column.name] = default.arg(context) if default.is_callable else default.arg
        filled.append(row)
    return filled


def release(session: Session, model, record_id, token: str) -> None:
    """Gives back a lease (`lease_until`, `claim_token`) still held under `token`, so
    that the next run takes the row again without waiting for the lease to run out."""
    session.execute(
        update(model).where(model.id == record_id, model.claim_token == token)
        .values(lease_until=None, claim_token=None).execution_options(synchronize_session=False)
    )


def release_lease(session: Session, model, record_id) -> None:
    """Clears the lease of a row leased without a token (its job takes it, then holds
    its own token): the next sweep finds it due at once."""
    session.execute(
        update(model).where(model.id == record_id, model.claim_token.is_(None))
        .values(lease_until=None).execution_options(synchronize_session=False)
    )


def release_all(session: Session, model, record_ids, token: str) -> None:
    """`release` for several rows claimed under one token."""
    session.execute(
        update(model).where(model.id.in_(list(record_ids)), model.claim_token == token)
        .values(lease_until=None, claim_token=None).execution_options(synchronize_session=False)
    )


def hand_out(
    *, database, queue, run, model, job_name: str, claimed=None, token: str | None = None, slices=None, give_back=None,
) -> int:
    """Hands claimed rows to the queue; a claim the queue refused (Redis down) is
    released, for the next run to retry. Returns how many rows were queued.

    A job a row: `claimed` (ids) under one `token` queues `run(record_id, token)` for
    each, job id `{job_name}-{record_id}-{token}`; a refused row is released and the
    next one tried. Rows leased without a token (`token` None: the job takes the row
    itself, as a bulk operation's run does) queue `run(record_id)`, and a refused
    row's lease is cleared, for the next sweep to hand it out again at once.

    A job a slice: `slices`, a list of (token, ids), queues `run(token, ids)` for each,
    job id `{job_name}-{token}`. The first refusal releases that slice and every slice
    not handed out yet: the queue is not there, the next run tries them all again.
    Rows whose claim is not their lease and token columns (a post target's, which
    has one per kind of work) are given back by `give_back(session, token, ids)`."""
    if slices is not None:
        return _hand_out_slices(
            database=database, queue=queue, run=run, model=model, slices=slices, job_name=job_name, give_back=give_back,
        )
    handed = 0
    for record_id in claimed:
        try:
            if token is None:
                queue.enqueue(run, str(record_id), job_id=f"{job_name}-{record_id}-{uuid.uuid4()}")
            else:
                queue.enqueue(run, str(record_id), token, job_id=f"{job_name}-{record_id}-{token}")
            handed += 1
        except Exception:  # noqa: BLE001 - any failure to queue: give the claim back
            logger.warning("could not queue %s", job_name, exc_info=True, extra={"record_id": str(record_id)})
            with database.transaction() as session:
                if token is None:
                    release_lease(session, model, record_id)
                else:
                    release(session, model, record_id, token)
    return handed


def _hand_out_slices(*, database, queue, run, model, slices, job_name: str, give_back=None) -> int:
    handed = 0
    for index, (token, ids) in enumerate(slices):
        try:
            queue.enqueue(run, token, [str(record_id) for record_id in ids], job_id=f"{job_name}-{token}")
        except Exception:  # noqa: BLE001 - any failure to queue: give the claims back
            left = slices[index:]
            logger.warning("could not queue %s", job_name, exc_info=True,
                           extra={"slices": len(left), "records": sum(len(rows) for _, rows in left)})
            with database.transaction() as session:
                for left_token, left_ids in left:
                    if give_back is not None:
                        give_back(session, left_token, left_ids)
                    else:
                        release_all(session, model, left_ids, left_token)
            return handed
        handed += len(ids)
    return handed
