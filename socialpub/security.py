"""Authentication and authorisation (cross-cutting: every operation's scope comes from
the contract's security requirement, checked here).

The gate middleware resolves the bearer key once per request (`cached_key`, `resolve_key`)
and leaves the result in the ASGI scope; connexion's security layer, through
`ScopedBearerSecurityHandler`, then enforces the plan and the operation's scopes,
which connexion itself does not do for `http` bearer schemes.
"""
from __future__ import annotations

from connexion.security import BearerSecurityHandler

from persistence.db import Database
from persistence.types import utcnow
from socialpub.errors import ApiError
from socialpub.keycache import Resolved, principal_cache
from socialpub.principal import Principal
from socialpub.scopes import API_PLANS
from socialpub.keys import service as api_keys

STATE_PRINCIPAL = "principal"




def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def cached_key(token: str) -> Resolved | None:
    """A cache hit that is still valid, without touching the database; whether its
    revision is still the current one is for the caller to check (`admit`)."""
    if not api_keys.KEY_PATTERN.match(token):
        return None
    resolved = principal_cache.get(api_keys.hash_value(token))
    if resolved is not None and resolved.principal.is_valid_at(utcnow()):
        return resolved
    return None


def resolve_key(token: str, database: Database, cache_seconds: float) -> Resolved | None:
    """The key from the database (a cache miss, or a revision that moved), cached."""
    with database.transaction() as session:
        resolved = api_keys.resolve(session=session, value=token)
    if resolved is not None and cache_seconds > 0:
        principal_cache.put(api_keys.hash_value(token), resolved, cache_seconds)
    return resolved


def current_revision(database: Database) -> int:
    """The key revision read from the database: the embedded default's check of a
    cached key (with Redis, the rate-limit script returns it)."""
    return int(database.read_value(api_keys.CURRENT_REVISION_SQL))


def authorize(principal: Principal | None, required_scopes) -> dict:
    """Raises the right 401/403; returns connexion's token_info for the handler."""
    if principal is None:
        raise ApiError.invalid_api_key()
    if principal.plan not in API_PLANS:
        raise ApiError.plan_not_eligible(principal.plan)
    missing = set(required_scopes) - principal.scopes
    if missing:
        raise ApiError.insufficient_scope(sorted(missing))
    return {"sub": str(principal.api_key_id), "principal": principal}


class ScopedBearerSecurityHandler(BearerSecurityHandler):
    """Registered for `http` bearer schemes through connexion's security_map."""

    def get_fn(self, security_scheme, required_scopes):
        required = frozenset(required_scopes or ())

        def verify(request):
            state = request.scope.get("state") or {}
            return authorize(state.get(STATE_PRINCIPAL), required)

        return verify
