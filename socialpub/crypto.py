"""Encryption at rest for account tokens (cryptography's Fernet).

SOCIALPUB_ENCRYPTION_KEYS holds one or more Fernet keys, comma-separated, newest
first: data is encrypted with the first and decrypted with any, so keys can be
rotated. On the embedded default a key is generated once into var/encryption.key
(mode 0600) so `make run` needs no set-up.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from socialpub.config import PROJECT_ROOT

KEY_FILE = PROJECT_ROOT / "var" / "encryption.key"


def _embedded_key() -> str:
    if not KEY_FILE.exists():
        KEY_FILE.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(Fernet.generate_key().decode())
    return Path(KEY_FILE).read_text().strip()


@lru_cache(maxsize=4)
def _fernet(keys: str) -> MultiFernet:
    return MultiFernet([Fernet(key.strip().encode()) for key in keys.split(",") if key.strip()])


def _configured() -> MultiFernet:
    return _fernet(os.environ.get("SOCIALPUB_ENCRYPTION_KEYS") or _embedded_key())


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
