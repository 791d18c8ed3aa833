"""The one way services read and write tenant records (cross-cutting).

Every query goes through a TenantScope. Built from an API key (`TenantScope.of`), it
filters on the key's workspace and mode; built for a whole workspace
(`TenantScope.workspace`), for the dashboard and the CLI, it filters on the
workspace and spans both modes. Another workspace's (or the other mode's) record
cannot be reached by forgetting a filter: it is simply "not found".

A scope also knows who acts (`Actor`): the API key (by its name), a dashboard member,
the CLI operator, or a named job (`rss feed <id>`, `publishing`, `bulk <id>`). What a
change records of its author (the calendar's activity, say) is the scope's actor, so
no service needs to be told it separately, and a job acts as itself, never as a
made-up key.
"""
from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from typing import Callable, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select

from socialpub.errors import ApiError

T = TypeVar("T")

BOTH_MODES = None


def parse_id(value) -> uuid.UUID | None:
    """A UUID, or None for anything that is not one (a malformed id is not found)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None


def require_workspace(workspace_id) -> uuid.UUID:
    """The workspace id a scope is built for: a scope without one would see every
    workspace, so a missing or malformed id is refused here, once."""
    parsed = parse_id(workspace_id)
    if parsed is None:
        raise ApiError.not_found("workspace", workspace_id)
    return parsed


@dataclass(frozen=True)
class Actor:
    """Who makes a change: `kind` is key, member, operator or job; `name` is what the
    records show (a key's name, a member's email, `operator <user>`, a job's name)."""

    kind: str
    name: str

    KINDS = ("key", "member", "operator", "job")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise ValueError(f"unknown actor kind {self.kind!r}")
        if not self.name:
            raise ValueError("an actor has a name")

    @classmethod
    def key(cls, principal) -> "Actor":
        """An API key, by the name its owner gave it (or its id, for a key without one)."""
        return cls("key", principal.key_name or f"key {principal.api_key_id}")

    @classmethod
    def member(cls, email: str) -> "Actor":
        return cls("member", email)

    @classmethod
    def operator(cls, user: str | None = None) -> "Actor":
        return cls("operator", f"operator {user}" if user else "operator")

    @classmethod
    def job(cls, name: str) -> "Actor":
        return cls("job", name)

    def __str__(self) -> str:
        return self.name


class TenantScope:
    def __init__(self, session: Session, workspace_id, livemode: bool | None, *, actor: Actor):
        if not isinstance(actor, Actor):
            raise TypeError("a scope is built with the Actor who acts in it")
        self.session = session
        self.workspace_id = require_workspace(workspace_id)
        # None: both modes (the dashboard's and the CLI's view of a workspace).
        self.livemode = livemode
        self.actor = actor
        self._remembered: dict = {}

    def remember(self, name: str, compute):
        """`compute()`, once per scope: a scope lives for one request or one chunk of a
        job, so what it remembers (such as the connected accounts) is read once
        however many posts that unit of work touches."""
        if name not in self._remembered:
            self._remembered[name] = compute()
        return self._remembered[name]

    @classmethod
    def of(cls, session: Session, principal) -> "TenantScope":
        """The scope of an API key: its workspace, its mode; the key acts."""
        return cls(session, principal.workspace_id, principal.livemode, actor=Actor.key(principal))

    @classmethod
    def workspace(
        cls, session: Session, workspace_id, livemode: bool | None = BOTH_MODES, *, actor: Actor
    ) -> "TenantScope":
        """The scope of a whole workspace (the dashboard's member, the CLI's operator),
        both modes unless one is named."""
        return cls(session, workspace_id, livemode, actor=actor)

    @classmethod
    def for_job(cls, session: Session, workspace_id, livemode: bool, *, job: str) -> "TenantScope":
        """The scope a job works in on a record's behalf: the record's workspace and
        mode, the job acting under its own name (`rss feed <id>`, `publishing`)."""
        return cls(session, workspace_id, livemode, actor=Actor.job(job))

    @property
    def both_modes(self) -> bool:
        return self.livemode is None

    def criteria(self, model) -> list:
        """The filter every query of `model` carries in this scope."""
        criteria = [model.workspace_id == self.workspace_id]
        if self.livemode is not None:
            criteria.append(model.livemode == self.livemode)
        return criteria

    def select(self, model: type[T], *criteria) -> Select:
        return select(model).where(*self.criteria(model), *criteria)

    def count_query(self, model: type[T], *criteria) -> Select:
        """How many `model` records in this scope match `criteria`, as a query: a list
        hands it to `envelope.paginate`, which asks it with the page."""
        return select(func.count()).select_from(model).where(*self.criteria(model), *criteria)

    def count(self, model: type[T], *criteria) -> int:
        return self.session.execute(self.count_query(model, *criteria)).scalar_one()

    def get(self, model: type[T], record_id, *, resource: str, for_update: bool = False, options=()) -> T:
        """The record, or 404 naming it. Malformed ids are simply not found."""
        parsed = parse_id(record_id)
        if parsed is not None:
            query = self.select(model, model.id == parsed).options(*options)
            if for_update:
                # Locked rows are read afresh: a session that loaded them earlier must
                # not decide on what it saw before the lock.
                query = query.with_for_update(of=model).execution_options(populate_existing=True)
            record = self.session.execute(query).scalar_one_or_none()
            if record is not None:
                return record
        raise ApiError.not_found(resource, record_id)

    def add(self, record: T, *, livemode: bool | None = None) -> T:
        """Adds a record to this scope's workspace and mode. A workspace-wide scope
        spans both modes, so the record's mode must be named."""
        mode = self.livemode if livemode is None else livemode
        if mode is None:
            raise ValueError("a workspace-wide scope adds a record only with its mode named")
        if self.livemode is not None and mode != self.livemode:
            raise ValueError("a record cannot be added to the other mode of a key's scope")
        record.workspace_id = self.workspace_id
        record.livemode = mode
        self.session.add(record)
        return record


def scoped(service: Callable) -> Callable:
    """A service written on a scope, `service(scope, **arguments)`, called as the API
    calls every service: `service(session=, principal=, **arguments)` works in the
    key's scope (`TenantScope.of`). Whoever acts in a scope of their own (the CLI's
    operator, `TenantScope.workspace(..., actor=)`) calls
    `service.in_scope(scope, **arguments)`."""

    @functools.wraps(service)
    def with_key(*, session: Session, principal, **arguments):
        return service(TenantScope.of(session, principal), **arguments)

    with_key.in_scope = service
    return with_key
