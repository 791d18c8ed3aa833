"""API keys: create, list, roll, revoke, and resolve a presented value to a Principal."""
from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import string
import uuid

from sqlalchemy import or_, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from persistence.keys import ApiKey, ApiKeyRevision, ApiKeySecret
from persistence.types import utcnow
from persistence.workspaces import Workspace
from socialpub import keycache
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.scopes import ALL_SCOPES
from socialpub.tenancy import Actor, TenantScope, parse_id

BASE62 = string.digits + string.ascii_letters
SECRET_LENGTH = 40
VISIBLE_PREFIX_LENGTH = 13  # "svc_test_" plus four characters
KEY_PATTERN = re.compile(r"^svc_(live|test)_[0-9A-Za-z]{32,}$")
MAX_PER_MINUTE = 1000
MAX_PER_DAY = 100_000
# last_used_at is written at most this often per key, keeping requests read-only.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


def generate_value(livemode: bool) -> str:
    body = "".join(secrets.choice(BASE62) for _ in range(SECRET_LENGTH))
    return f"svc_{'live' if livemode else 'test'}_{body}"


def hash_value(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _mode_to_livemode(mode: str) -> bool:
    if mode not in ("live", "test"):
        raise ApiError.field_invalid("mode", "mode must be 'live' or 'test'.")
    return mode == "live"


def _check_limits(per_minute: int | None, per_day: int | None) -> None:
    if per_minute is not None and not 1 <= per_minute <= MAX_PER_MINUTE:
        raise ApiError.field_invalid("per_minute", f"per-minute limit must be 1..{MAX_PER_MINUTE}.")
    if per_day is not None and not 1 <= per_day <= MAX_PER_DAY:
        raise ApiError.field_invalid("per_day", f"per-day limit must be 1..{MAX_PER_DAY}.")


def _check_scopes(scopes) -> list[str]:
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown:
        raise ApiError.field_invalid("scopes", f"Unknown scope(s): {', '.join(unknown)}.")
    if not scopes:
        raise ApiError.field_invalid("scopes", "A key needs at least one scope.")
    # Keep the canonical order so listings read the same way everywhere.
    return [scope for scope in ALL_SCOPES if scope in set(scopes)]


def _new_secret(api_key: ApiKey) -> str:
    value = generate_value(api_key.livemode)
    api_key.secrets.append(
        ApiKeySecret(secret_hash=hash_value(value), visible_prefix=value[:VISIBLE_PREFIX_LENGTH])
    )
    return value


def create_api_key(
    *,
    session: Session, actor: Actor,
    workspace_id: uuid.UUID,
    name: str,
    scopes,
    mode: str = "test",
    per_minute: int | None = None,
    per_day: int | None = None,
    expires_in_days: int | None = None,
) -> tuple[ApiKey, str]:
    """Returns the key and its value. The value is shown once and never stored."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ApiError.field_invalid("name", "A key needs a name of 1 to 200 characters.")
    _check_limits(per_minute, per_day)
    if expires_in_days is not None and not 1 <= expires_in_days <= 3650:
        raise ApiError.field_invalid("expires_in_days", "expiry must be 1..3650 days.")
    api_key = ApiKey(
        name=name,
        scopes=_check_scopes(scopes),
        per_minute=per_minute,
        per_day=per_day,
        expires_at=utcnow() + dt.timedelta(days=expires_in_days) if expires_in_days else None,
    )
    scope.add(api_key, livemode=_mode_to_livemode(mode))
    value = _new_secret(api_key)
    session.commit()
    return api_key, value


def list_api_keys(*, session: Session, actor: Actor, workspace_id: uuid.UUID) -> list[ApiKey]:
    """The workspace's keys, both modes, oldest first."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    return list(session.execute(scope.select(ApiKey).order_by(ApiKey.created_at)).scalars())


def get_api_key(*, session: Session, actor: Actor, workspace_id: uuid.UUID, api_key_id) -> ApiKey:
    """The workspace's key, or 404: another workspace's key is not found either, so
    its id leaks nothing."""
    return TenantScope.workspace(session, workspace_id, actor=actor).get(ApiKey, api_key_id, resource="API key")


def workspace_of_key(*, session: Session, api_key_id) -> uuid.UUID:
    """The workspace a key belongs to, or 404: for operators (the CLI), who name a
    key by its id alone and then act on it in its workspace."""
    parsed = parse_id(api_key_id)
    workspace_id = None
    if parsed is not None:
        workspace_id = session.execute(select(ApiKey.workspace_id).where(ApiKey.id == parsed)).scalar_one_or_none()
    if workspace_id is None:
        raise ApiError.not_found("API key", api_key_id)
    return workspace_id


def current_prefix(api_key: ApiKey) -> str:
    current = [secret for secret in api_key.secrets if secret.expires_at is None]
    return (current[-1] if current else api_key.secrets[-1]).visible_prefix


def roll_api_key(
    *, session: Session, actor: Actor, workspace_id: uuid.UUID, api_key_id, grace_hours: float = 0
) -> tuple[ApiKey, str]:
    """A new value for the key. The old value keeps working for `grace_hours`."""
    if grace_hours < 0 or grace_hours > 24 * 30:
        raise ApiError.field_invalid("grace_hours", "grace period must be 0..720 hours.")
    api_key = get_api_key(session=session, actor=actor, api_key_id=api_key_id, workspace_id=workspace_id)
    if api_key.revoked_at is not None:
        raise ApiError.conflict("A revoked key cannot be rolled.")
    now = utcnow()
    deadline = now + dt.timedelta(hours=grace_hours)
    for secret in api_key.secrets:
        if secret.expires_at is None or secret.expires_at > deadline:
            secret.expires_at = deadline
    value = _new_secret(api_key)
    revision = move_revision(session)
    session.commit()
    keycache.revision_moved(revision)
    return api_key, value


def revoke_api_key(*, session: Session, actor: Actor, workspace_id: uuid.UUID, api_key_id) -> ApiKey:
    api_key = get_api_key(session=session, actor=actor, api_key_id=api_key_id, workspace_id=workspace_id)
    if api_key.revoked_at is None:
        api_key.revoked_at = utcnow()
        revision = move_revision(session)
        session.commit()
        keycache.revision_moved(revision)
    return api_key


_MOVE_REVISION = (
    update(ApiKeyRevision).where(ApiKeyRevision.id == 1).values(revision=ApiKeyRevision.revision + 1)
    .returning(ApiKeyRevision.revision)
)
_READ_REVISION = select(ApiKeyRevision.revision).where(ApiKeyRevision.id == 1)
# The same, for a read outside a session (persistence.db.Database.read_value).
CURRENT_REVISION_SQL = "SELECT revision FROM api_key_revisions WHERE id = 1"


def move_revision(session: Session) -> int:
    """Moves the key revision in the caller's transaction (see socialpub.keycache)."""
    return session.execute(_MOVE_REVISION.execution_options(synchronize_session=False)).scalar_one()


def current_revision(session: Session) -> int:
    return session.execute(_READ_REVISION).scalar_one()


def purge_expired_secrets(*, session: Session, now: dt.datetime | None = None) -> int:
    """Deletes rolled values whose grace period is over. Returns how many."""
    now = now or utcnow()
    expired = session.execute(
        select(ApiKeySecret).where(ApiKeySecret.expires_at.is_not(None), ApiKeySecret.expires_at <= now)
    ).scalars().all()
    for secret in expired:
        session.delete(secret)
    session.commit()
    return len(expired)


def resolve_principal(*, session: Session, value: str, now: dt.datetime | None = None) -> Principal | None:
    """The principal a presented key value stands for, or None if it is not a valid key
    (malformed, unknown, revoked, expired, or a rolled value past its grace period)."""
    resolved = resolve(session=session, value=value, now=now)
    return resolved.principal if resolved is not None else None


def resolve(*, session: Session, value: str, now: dt.datetime | None = None) -> keycache.Resolved | None:
    """resolve_principal, with the key revision it was read under: read first, in the
    same transaction, so a revocation committed after it moves the revision past it."""
    if not value or not KEY_PATTERN.match(value):
        return None
    now = now or utcnow()
    revision = current_revision(session)
    row = session.execute(
        select(ApiKeySecret, ApiKey, Workspace)
        .join(ApiKey, ApiKeySecret.api_key_id == ApiKey.id)
        .join(Workspace, ApiKey.workspace_id == Workspace.id)
        .where(ApiKeySecret.secret_hash == hash_value(value))
    ).first()
    if row is None:
        return None
    secret, api_key, workspace = row
    if api_key.revoked_at is not None:
        return None
    deadlines = [d for d in (api_key.expires_at, secret.expires_at) if d is not None]
    principal = Principal(
        api_key_id=api_key.id,
        workspace_id=workspace.id,
        livemode=api_key.livemode,
        scopes=frozenset(api_key.scopes),
        plan=workspace.plan,
        per_minute=api_key.per_minute,
        per_day=api_key.per_day,
        valid_until=min(deadlines) if deadlines else None,
        key_name=api_key.name,
    )
    if not principal.is_valid_at(now):
        return None
    if api_key.last_used_at is None or now - api_key.last_used_at >= LAST_USED_RESOLUTION:
        _touch_last_used(session, api_key.id, now)
    return keycache.Resolved(principal, revision)


def _touch_last_used(session: Session, api_key_id, now: dt.datetime) -> None:
    """Best effort and conditional: concurrent first requests of a key write it once,
    and a busy database never fails a request over bookkeeping."""
    session.commit()
    try:
        session.execute(
            update(ApiKey)
            .where(ApiKey.id == api_key_id)
            .where(or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at < now - LAST_USED_RESOLUTION))
            .values(last_used_at=now)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    except OperationalError:
        session.rollback()


def forget_cached_principals() -> None:
    keycache.principal_cache.clear()
