"""Workspace members: created by an operator (`socialpub user create`), signed in to
the dashboard with an email and a password (argon2id); listed, disabled (no sign-in,
their sessions ended) and given a new password by an operator."""
from __future__ import annotations

import functools
import hashlib
import re
import secrets
import uuid

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.members import Member
from persistence.workspaces import Workspace
from persistence.types import utcnow
from socialpub.errors import ApiError
from socialpub.tenancy import parse_id

MIN_PASSWORD_LENGTH = 12
# argon2 takes any length, but hashing megabytes on every attempt is a denial of service.
MAX_PASSWORD_LENGTH = 1024
# Deliberately loose: one @, something on each side, a dot in the domain, no spaces.
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the email is unknown, so a wrong email costs as long as a
    wrong password and the timing does not tell which emails have accounts. Made on
    first use rather than at import: hashing takes a fifth of a second, which every
    process would otherwise pay at start."""
    return _hasher.hash("not a password anyone has")


class SignInRefused(Exception):
    """Wrong email or password. One message for both: which one is not said."""


def email_digest(email: str | None) -> str:
    """An email as the sign-in limiter's counters and the security log name it: the
    SHA-256 of its normal form, so neither lists who tried to sign in."""
    return hashlib.sha256(normalize_email(email).encode()).hexdigest()


def normalize_email(email: str | None) -> str:
    return (email or "").strip().lower()


def _check_email(email: str) -> str:
    email = normalize_email(email)
    if not email or len(email) > 254 or not EMAIL_PATTERN.match(email):
        raise ApiError.field_invalid("email", "Enter an email address such as name@example.com.")
    return email


def _check_password(password: str | None) -> str:
    password = password or ""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ApiError.field_invalid("password", f"A password needs at least {MIN_PASSWORD_LENGTH} characters.")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ApiError.field_invalid("password", f"A password may have at most {MAX_PASSWORD_LENGTH} characters.")
    return password


def create_member(*, session: Session, workspace_id: uuid.UUID, email: str, password: str) -> Member:
    if session.get(Workspace, workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    email = _check_email(email)
    password = _check_password(password)
    if session.execute(select(Member.id).where(Member.email == email)).first() is not None:
        raise ApiError.conflict(f"A member with the email {email} already exists.")
    member = Member(workspace_id=workspace_id, email=email, password_hash=_hasher.hash(password))
    session.add(member)
    try:
        session.commit()
    except IntegrityError:  # the same email created concurrently
        session.rollback()
        raise ApiError.conflict(f"A member with the email {email} already exists.") from None
    return member


def authenticate(*, session: Session, email: str, password: str) -> Member:
    """The member these credentials belong to, or SignInRefused."""
    email = normalize_email(email)
    password = password or ""
    member = None
    if email and len(password) <= MAX_PASSWORD_LENGTH:
        member = session.execute(select(Member).where(Member.email == email)).scalar_one_or_none()
    try:
        _hasher.verify(member.password_hash if member else _dummy_hash(), password[:MAX_PASSWORD_LENGTH])
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        raise SignInRefused() from None
    if member is None or member.disabled_at is not None:
        # A disabled member is refused as a wrong password is: the form says no more.
        raise SignInRefused()
    if _hasher.check_needs_rehash(member.password_hash):
        member.password_hash = _hasher.hash(password)
    member.last_sign_in_at = utcnow()
    session.commit()
    return member


def end_sessions(*, session: Session, member_id) -> None:
    """Ends every dashboard session of the member: the sessions' cookies carry the
    version this bumps."""
    member = get_member(session=session, member_id=member_id)
    if member is not None:
        member.session_version += 1
        session.commit()


def get_member(*, session: Session, member_id) -> Member | None:
    """The member a dashboard session names, or None (deleted since it signed in)."""
    parsed = parse_id(member_id)
    return session.get(Member, parsed) if parsed else None


# -- the operator's ---------------------------------------------------------------------

# A generated password: 24 URL-safe characters (144 bits), shown once.
GENERATED_PASSWORD_BYTES = 18


def list_members(*, session: Session, workspace_id=None, limit: int = 100) -> list[Member]:
    """Members by email, of one workspace or of all."""
    criteria = [] if workspace_id is None else [Member.workspace_id == workspace_id]
    return list(session.execute(select(Member).where(*criteria).order_by(Member.email).limit(limit)).scalars())


def find_member(*, session: Session, member: str) -> Member:
    """A member named by id or by email."""
    parsed = parse_id(member)
    found = session.get(Member, parsed) if parsed else session.execute(
        select(Member).where(Member.email == normalize_email(member))
    ).scalar_one_or_none()
    if found is None:
        raise ApiError.not_found("member", member)
    return found


def disable_member(*, session: Session, member: str) -> Member:
    """The member can no longer sign in, and every session of theirs ends now."""
    found = find_member(session=session, member=member)
    if found.disabled_at is None:
        found.disabled_at = utcnow()
        found.session_version += 1
        session.commit()
    return found


def enable_member(*, session: Session, member: str) -> Member:
    found = find_member(session=session, member=member)
    if found.disabled_at is not None:
        found.disabled_at = None
        session.commit()
    return found


def reset_password(*, session: Session, member: str) -> tuple[Member, str]:
    """A new generated password for the member (returned once, stored only as its
    hash); their sessions end, so whoever knew the old one is signed out."""
    found = find_member(session=session, member=member)
    password = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES)
    found.password_hash = _hasher.hash(password)
    found.session_version += 1
    session.commit()
    return found, password
