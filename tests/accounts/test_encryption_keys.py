"""Every process must read the account secrets the others write: the first process to
start writes a key check, and one whose keys cannot read it refuses to start, with a
clear error, rather than fail every publication. Rotation (newest key first, older
keys after it) keeps working."""
from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from persistence.db import Database
from persistence.migrate import upgrade
from persistence.crypto import EncryptionKeyCheck
from socialpub import crypto
from socialpub.app import create_app
from tests.support.settings import test_settings

OLD, NEW, ELSEWHERE = (Fernet.generate_key().decode() for _ in range(3))


@pytest.fixture
def database_url(tmp_path) -> str:
    """A database of its own: the suite's shared one is rolled back under each test."""
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    upgrade(url)
    return url


@pytest.fixture
def keys(monkeypatch):
    def use(*values: str) -> None:
        monkeypatch.setenv("SOCIALPUB_ENCRYPTION_KEYS", ",".join(values))

    return use


def start(database_url: str) -> None:
    """What starting the API does: the app factory."""
    app = create_app(test_settings(database_url))
    app.app.extensions["socialpub"].close()


def stored_check(database_url: str) -> str:
    database = Database(database_url)
    try:
        with database.transaction() as session:
            return session.execute(select(EncryptionKeyCheck.token)).scalar_one()
    finally:
        database.dispose()


def test_the_first_process_writes_the_check_and_the_same_keys_start_again(database_url, keys):
    keys(OLD)
    start(database_url)
    assert Fernet(OLD.encode()).decrypt(stored_check(database_url).encode()) == crypto.KEY_CHECK_VALUE
    start(database_url)
    start(database_url)


def test_other_keys_are_refused_with_a_clear_message(database_url, keys):
    keys(OLD)
    start(database_url)
    keys(ELSEWHERE)
    with pytest.raises(crypto.EncryptionKeysRefused) as refused:
        start(database_url)
    message = str(refused.value)
    assert "\n" not in message
    assert "cannot read the account secrets" in message and "SOCIALPUB_ENCRYPTION_KEYS" in message


def test_a_key_generated_on_another_host_is_refused(database_url, keys, monkeypatch, tmp_path):
    keys(OLD)
    start(database_url)
    # A host without SOCIALPUB_ENCRYPTION_KEYS generates a key file of its own.
    monkeypatch.delenv("SOCIALPUB_ENCRYPTION_KEYS")
    monkeypatch.setattr(crypto, "KEY_FILE", tmp_path / "var" / "encryption.key")
    with pytest.raises(crypto.EncryptionKeysRefused, match="the key generated on this host in .*encryption.key"):
        start(database_url)
    assert (tmp_path / "var" / "encryption.key").exists()


def test_rotated_keys_still_start(database_url, keys):
    keys(OLD)
    start(database_url)
    secrets = crypto.encrypt_json({"access_token": "written with the old key"})

    keys(NEW, OLD)  # the new key first, the old one after it
    start(database_url)
    assert crypto.decrypt_json(secrets) == {"access_token": "written with the old key"}
    # The check is now written with the new key: a process with it alone starts...
    keys(NEW)
    start(database_url)
    # ...and one that never got the new key can no longer read what is written.
    keys(OLD)
    with pytest.raises(crypto.EncryptionKeysRefused):
        start(database_url)


def test_a_new_key_added_after_the_current_one_changes_nothing(database_url, keys):
    keys(OLD)
    start(database_url)
    keys(OLD, NEW)  # rolled out everywhere before it becomes the newest
    start(database_url)
    keys(OLD)
    start(database_url)


def test_a_database_without_the_migration_is_refused(tmp_path, keys):
    keys(OLD)
    with pytest.raises(crypto.EncryptionKeysRefused, match="socialpub db upgrade"):
        start(f"sqlite:///{tmp_path / 'empty.db'}")
