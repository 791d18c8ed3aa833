"""Encryption at rest (cross-cutting): account tokens and webhook secrets, with
cryptography's Fernet.

SOCIALPUB_ENCRYPTION_KEYS holds one or more Fernet keys, comma-separated, newest
first: data is encrypted with the first and decrypted with any, so keys can be
rotated. On the embedded default a key is generated once into var/encryption.key
(mode 0600) so `make run` needs no set-up.

Every process must run with keys that read what the others write. A process started
on another host without SOCIALPUB_ENCRYPTION_KEYS generates a key of its own and could
read no token; verify_keys, run as the API, a worker or `serve` starts, refuses to
start such a process rather than let it fail every publication.
"""
from __future__ import annotations

import json
import logging
import os
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from socialpub.config import PROJECT_ROOT, generated_once

KEY_FILE = PROJECT_ROOT / "var" / "encryption.key"
ENVIRONMENT_VARIABLE = "SOCIALPUB_ENCRYPTION_KEYS"
# What the key check encrypts: any fixed value would do.
KEY_CHECK_VALUE = b"socialpub encryption key check"
_KEY_CHECK_ID = 1

logger = logging.getLogger("socialpub.crypto")


def _embedded_key() -> str:
    return generated_once(Path(KEY_FILE), lambda: Fernet.generate_key().decode())


@lru_cache(maxsize=4)
def _fernets(keys: str) -> tuple[Fernet, ...]:
    return tuple(Fernet(key.strip().encode()) for key in keys.split(",") if key.strip())


@lru_cache(maxsize=4)
def _fernet(keys: str) -> MultiFernet:
    return MultiFernet(list(_fernets(keys)))


def _configured_keys() -> str:
    return os.environ.get(ENVIRONMENT_VARIABLE) or _embedded_key()


def _configured() -> MultiFernet:
    return _fernet(_configured_keys())


def encrypt_json(value: dict) -> str:
    return _configured().encrypt(json.dumps(value).encode()).decode()


class UndecryptableSecret(Exception):
    """Stored secrets that no configured key opens (a key was removed too early)."""


def decrypt_json(token: str | None) -> dict:
    if not token:
        return {}
    try:
        return json.loads(_configured().decrypt(token.encode()))
    except InvalidToken:
        raise UndecryptableSecret("stored account secrets cannot be decrypted with the configured keys") from None


class EncryptionKeysRefused(Exception):
    """This process's keys cannot read what the database was written with; the
    message says what to do, on one line."""


def verify_keys(database) -> None:
    """Checks that this process's keys read the database's key check, writing it if
    the database has none yet, and re-encrypting it with the newest key when it was
    written with an older one (a rotation: from then on every process needs the new
    key). Raises EncryptionKeysRefused when they cannot. A database that cannot be
    reached is not checked (logged): the process starts, and reports itself not
    ready until the database is back."""
    from sqlalchemy.exc import IntegrityError, SQLAlchemyError

    try:
        database.ping()
    except SQLAlchemyError as exc:
        logger.warning("encryption keys not checked: the database is unreachable (%s)", exc.__class__.__name__)
        return
    try:
        with database.transaction() as session:
            _check(session)
    except IntegrityError:
        # Another process wrote the first check at the same moment: check against theirs.
        with database.transaction() as session:
            _check(session)


def _check(session) -> None:
    from sqlalchemy import inspect, select

    from persistence.crypto import EncryptionKeyCheck

    if not inspect(session.connection()).has_table(EncryptionKeyCheck.__tablename__):
        raise EncryptionKeysRefused("the database schema is out of date (no encryption key check): run `socialpub db upgrade`")
    keys = _configured_keys()
    fernets, fernet = _fernets(keys), _fernet(keys)
    check = session.execute(
        select(EncryptionKeyCheck).where(EncryptionKeyCheck.id == _KEY_CHECK_ID).with_for_update()
    ).scalar_one_or_none()
    if check is None:
        session.add(EncryptionKeyCheck(id=_KEY_CHECK_ID, token=fernet.encrypt(KEY_CHECK_VALUE).decode()))
        session.flush()
        return
    token = check.token.encode()
    try:
        readable = fernet.decrypt(token) == KEY_CHECK_VALUE
    except InvalidToken:
        readable = False
    if not readable:
        source = (
            ENVIRONMENT_VARIABLE if os.environ.get(ENVIRONMENT_VARIABLE)
            else f"the key generated on this host in {KEY_FILE}, as {ENVIRONMENT_VARIABLE} is not set"
        )
        raise EncryptionKeysRefused(
            f"the encryption keys of this process ({source}) cannot read the account secrets this database was "
            f"written with: give every process the same {ENVIRONMENT_VARIABLE} (newest key first, older keys after it)"
        )
    try:
        fernets[0].decrypt(token)
    except InvalidToken:
        check.token = fernet.rotate(token).decode()
