"""What a handler needs from the current request (cross-cutting): the session, the
queue, the principal, and loading a validated body through a marshmallow schema; and
which proxies' word on the client's address and scheme is taken.

A request the API gate asks to commit once (`OneCommitRequest` in the ASGI scope's
state: an Idempotency-Key request) gets a session whose services' commits are
savepoints of one transaction, and a queue that holds its jobs until that
transaction commits: its answer is recorded in the same transaction just before the
commit (`commit_once`, after the handler answered and before the answer leaves), so
the change and its recorded answer are durable together or not at all."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from connexion.context import context
from connexion.context import scope as asgi_scope
from flask import current_app, g, request
from marshmallow import ValidationError
from werkzeug.middleware.proxy_fix import ProxyFix

from socialpub.errors import ApiError
from socialpub.principal import Principal
from workers.queue import AfterCommitQueue


def current_runtime():
    return current_app.extensions["socialpub"]


API_PREFIX = "/api/v1"
# The API's operations of these methods only read (the contract's GETs): their
# session needs no transaction of its own. (The dashboard's pages keep theirs.)
READ_ONLY_METHODS = frozenset({"GET", "HEAD"})


def current_session():
    unit = _one_commit_unit()
    if unit is not None:
        return unit.session
    database = current_runtime().database
    if request.method in READ_ONLY_METHODS and request.path.startswith(API_PREFIX + "/"):
        return database.read_session()
    return database.session()


def current_queue():
    """The queue a handler hands its services: in a request that commits once, one
    that holds its jobs until the commit."""
    unit = _one_commit_unit()
    return unit.queue if unit is not None else current_runtime().queue


# -- requests that commit once --------------------------------------------------------

ONE_COMMIT = "one_commit"  # the key of the ASGI scope's state


@dataclass
class OneCommitRequest:
    """What the API gate asks of a request whose change and answer commit together:
    `record(session, status, headers, body)` writes the answer in the request's
    transaction, just before it commits; `keeps(status)` says whether an answer of
    that status commits the request's work at all (else it is rolled back, and the
    gate records the answer on its own)."""

    record: Callable
    keeps: Callable[[int], bool]
    committed: bool = False


@dataclass
class _Unit:
    one: object  # persistence.db.OneCommit
    queue: AfterCommitQueue

    @property
    def session(self):
        return self.one.session


def _asked() -> OneCommitRequest | None:
    try:
        state = asgi_scope["state"]
    except (LookupError, RuntimeError, TypeError):  # outside a request of the API
        return None
    asked = state.get(ONE_COMMIT)
    return asked if isinstance(asked, OneCommitRequest) else None


def _one_commit_unit() -> _Unit | None:
    unit = g.get("socialpub_one_commit")
    if unit is None and request.method not in READ_ONLY_METHODS and _asked() is not None:
        runtime = current_runtime()
        unit = g.socialpub_one_commit = _Unit(runtime.database.one_commit(), AfterCommitQueue(runtime.queue))
    return unit


def commit_once(response):
    """(Flask, after each request.) For a request asked to commit once: records its
    answer in its transaction and commits, then hands its held jobs to the queue;
    an answer that is not kept rolls its work back. A failure to commit (the database
    gone) propagates, and the request answers 503 with nothing changed."""
    asked = _asked()
    if asked is None or asked.committed or not request.path.startswith(API_PREFIX + "/"):
        return response
    if not asked.keeps(response.status_code):
        _end_unit()
        return response
    unit = _one_commit_unit()
    headers = {name.lower(): value for name, value in response.headers.items()}
    asked.record(unit.session, response.status_code, headers, response.get_data())
    unit.one.commit()
    asked.committed = True
    unit.queue.release()
    return response


def _end_unit() -> None:
    unit = g.pop("socialpub_one_commit", None)
    if unit is not None:
        unit.queue.drop()
        unit.one.close()


def end_request() -> None:
    """(Flask, at teardown.) Closes the request's one-commit unit (rolling back what
    it did not commit) and its thread's session."""
    try:
        _end_unit()
    finally:
        current_runtime().database.remove()


def current_principal() -> Principal:
    return context["token_info"]["principal"]


def load(schema, body: dict, *, partial: bool = False) -> dict:
    """Contract names -> attribute names, with marshmallow's checks (timestamps...)."""
    try:
        return schema.load(body, partial=partial)
    except ValidationError as exc:
        details = []
        for field, messages in sorted(_flatten(exc.normalized_messages())):
            details.extend({"field": field, "message": message} for message in messages)
        message = details[0]["field"] + ": " + details[0]["message"] if len(details) == 1 else "The request failed validation."
        raise ApiError.validation(message, details=details) from None


def _flatten(messages, prefix=""):
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            yield from _flatten(value, name)
    else:
        yield prefix or "body", [str(m) for m in (messages if isinstance(messages, list) else [messages])]


def trust_proxies(app, hops: int) -> None:
    """Behind `hops` reverse proxies (a TLS-terminating load balancer is one), the
    client's address and scheme are read from the X-Forwarded-For and -Proto entries
    those proxies added, so the dashboard's Secure cookie and its sign-in limit per
    address see the real client. 0 trusts no such header: anyone can send them."""
    if isinstance(hops, bool) or not isinstance(hops, int) or hops < 0:
        raise ValueError(f"SOCIALPUB_TRUSTED_PROXY_HOPS must be a whole number, 0 or more, got {hops!r}")
    if hops:
        app.add_wsgi_middleware(ProxyFix, x_for=hops, x_proto=hops)


def forwarded_entry(header: str | None, hops: int) -> str | None:
    """The entry the outermost of `hops` trusted proxies added to a forwarded header
    (X-Forwarded-For, -Proto), or None: no trusted proxies, or fewer entries."""
    if hops and header:
        entries = [entry.strip() for entry in header.split(",")]
        if len(entries) >= hops and entries[-hops]:
            return entries[-hops]
    return None


def client_scheme(scheme: str, forwarded_proto: str | None, hops: int) -> str:
    """The scheme the client used: the connection's own, or the one the outermost
    trusted proxy received (X-Forwarded-Proto), as ProxyFix reads it for the dashboard."""
    return (forwarded_entry(forwarded_proto, hops) or scheme).lower()


def client_address(peer: str, forwarded_for: str | None, hops: int) -> str:
    """The client's address as ProxyFix reads it for the dashboard, for the API gate,
    which sits in front of the WSGI app: the entry the outermost of `hops` trusted
    proxies added to X-Forwarded-For, or the peer when there are fewer entries."""
    return forwarded_entry(forwarded_for, hops) or peer
