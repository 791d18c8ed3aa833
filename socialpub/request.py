"""What a handler needs from the current request (cross-cutting): the session, the principal, and
loading a validated body through a marshmallow schema; and which proxies' word on
the client's address and scheme is taken."""
from __future__ import annotations

from connexion.context import context
from flask import current_app, request
from marshmallow import ValidationError
from werkzeug.middleware.proxy_fix import ProxyFix

from socialpub.errors import ApiError
from socialpub.principal import Principal


def current_runtime():
    return current_app.extensions["socialpub"]


API_PREFIX = "/api/v1"
# The API's operations of these methods only read (the contract's GETs): their
# session needs no transaction of its own. (The dashboard's pages keep theirs.)
READ_ONLY_METHODS = frozenset({"GET", "HEAD"})


def current_session():
    database = current_runtime().database
    if request.method in READ_ONLY_METHODS and request.path.startswith(API_PREFIX + "/"):
        return database.read_session()
    return database.session()


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
