"""Changes announced in the writer's transaction (cross-cutting).

An area that changes a record announces the change once, on a `Topic` it declares
(`socialpub/posts/changes.py` declares the posts' topic). Areas that react to it (the
outbox's events, the calendar's activity, analytics enrolment; later search indexing
and crisis rules) subscribe in a `subscribers.py` module of their own, which the area
registry imports (`socialpub.areas.import_subscribers`): the writer never imports a
reader, so areas never import each other in loops.

A writer announces once the change is in the session, flushed, its new child rows
too (a page's blocks, a conversation's messages): subscribers read it as it is and
never flush the writer's work themselves, so a refusal of that work (a unique key
taken) is the writer's, where it handles it.

Subscribers run synchronously, in the writer's thread and transaction, in the order
they were registered (blinker, Flask's own signal library, keeps them; it calls a
sender's receivers in no set order, so a topic calls them itself, in that order). What they write commits
with the change or not at all: a subscriber that raises aborts the change, and the
writer's caller rolls the transaction back, so nothing is half-recorded.

    POSTS = Topic("post", kinds=("created", "published", ...))      # the writer's area
    POSTS.announce("published", scope=scope, record=post)          # in its service

    @POSTS.subscribe("published", "failed")                          # a reader's subscribers.py
    def enrol(change: Change) -> None: ...
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from blinker import Namespace

_namespace = Namespace()
_loaded = False
_loading = threading.Lock()


@dataclass(frozen=True)
class Change:
    """One announced change: what happened (`kind`) to which record, in whose scope
    (its session is the writer's transaction; its actor, who acted), and whatever the
    record no longer shows (`details`, such as the time a post was scheduled for)."""

    topic: str
    kind: str
    record: Any
    scope: Any  # socialpub.tenancy.TenantScope
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def records(self) -> list:
        """The records the change is about: its record, or the records of a list (a
        writer may announce several of one scope at once)."""
        return list(self.record) if isinstance(self.record, (list, tuple)) else [self.record]

    @property
    def session(self):
        return self.scope.session

    @property
    def actor(self):
        return self.scope.actor


class Topic:
    """What one kind of record announces, and the kinds of change it may announce."""

    def __init__(self, name: str, *, kinds: tuple[str, ...]):
        self.name = name
        self.kinds = tuple(kinds)
        self._signal = _namespace.signal(name)
        self._order: dict[int, int] = {}  # id of a connected receiver -> when it was registered

    def announce(self, kind: str, *, scope, record, **details) -> Change:
        """Runs every subscriber of `kind`, in the caller's transaction; a subscriber's
        exception propagates to the caller (who rolls back)."""
        self._check(kind)
        load_subscribers()
        change = Change(topic=self.name, kind=kind, record=record, scope=scope, details=details)
        for receiver in self._receivers(kind):
            receiver(kind, change=change)
        return change

    def subscribe(self, *kinds: str) -> Callable[[Callable[[Change], None]], Callable[[Change], None]]:
        """Registers `receiver(change)` for these kinds (every kind when none is named).
        For a subscriber module, at its import."""
        for kind in kinds:
            self._check(kind)

        def register(receiver: Callable[[Change], None]) -> Callable[[Change], None]:
            self._connect(_adapter(receiver), kinds)
            return receiver

        return register

    @contextmanager
    def subscribed(self, receiver: Callable[[Change], None], *kinds: str):
        """`receiver` subscribed while the block runs (tests)."""
        adapted = _adapter(receiver)
        for kind in kinds:
            self._check(kind)
        self._connect(adapted, kinds)
        try:
            yield
        finally:
            for kind in kinds or self.kinds:
                self._signal.disconnect(adapted, sender=kind)

    def subscribers(self, kind: str) -> list:
        """The receivers of `kind`, in the order they run (for tests and docs)."""
        self._check(kind)
        load_subscribers()
        return [getattr(receiver, "subscriber", receiver) for receiver in self._receivers(kind)]

    def _connect(self, adapted, kinds: tuple[str, ...]) -> None:
        self._order.setdefault(id(adapted), len(self._order))
        for kind in kinds or self.kinds:
            self._signal.connect(adapted, sender=kind, weak=False)

    def _receivers(self, kind: str) -> list:
        return sorted(self._signal.receivers_for(kind), key=lambda receiver: self._order.get(id(receiver), 0))

    def _check(self, kind: str) -> None:
        if kind not in self.kinds:
            raise ValueError(f"{self.name} announces {', '.join(self.kinds)}; not {kind!r}")


def _adapter(receiver: Callable[[Change], None]):
    def receive(_sender, *, change: Change) -> None:
        receiver(change)

    receive.subscriber = receiver  # type: ignore[attr-defined]
    receive.__name__ = getattr(receiver, "__name__", "receiver")
    return receive


def load_subscribers() -> None:
    """Imports every area's subscribers, once per process: before the first
    announcement, whoever makes it (a request, a job, the CLI, a test)."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if not _loaded:
            from socialpub import areas

            areas.import_subscribers()
            _loaded = True
